/**
 * One stream of `svc listen`: a WebSocket to the listener's stream (Node's own client, undici, with the
 * bearer token in the upgrade request), every attempt it carries forwarded to the developer's address and
 * its result reported back, until either side ends it or `stop` aborts.
 */
import { urlUnder } from '../../urls.js';
import { type AttemptResult, attemptLine, type ForwardFetch, forwardAttempt, type StreamAttempt } from './forward.js';

/** How a stream ended. */
export interface StreamEnd {
  /** The upgrade succeeded: the service had found the listener, and it was this client's. */
  opened: boolean;
  /** The service sent `ready`: it held the listener on this stream. */
  ready: boolean;
  code: number;
  reason: string;
}

export interface StreamOptions {
  baseUrl: string;
  streamPath: string;
  token: string;
  forwardTo: string;
  fetch?: ForwardFetch | undefined;
  /** A line on stdout (one per attempt). */
  out: (line: string) => void;
  /** The service's `ready`: it holds the listener on this stream now. */
  onReady: () => void;
}

/** The stream's address: ws:// or wss:// as the base address is http:// or https://. */
export function streamUrl(baseUrl: string, streamPath: string): URL {
  const url = urlUnder(baseUrl, streamPath);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url;
}

/**
 * Why this Node.js cannot hold a stream, or undefined. The global WebSocket came unflagged in Node.js 22.4, so
 * on Debian's 20 (or 22.0 to 22.3) `svc listen` opened a listener and then died with "ReferenceError:
 * WebSocket is not defined"; the other commands run there, so this one alone says it before anything is sent.
 */
export function missingWebSocket(version = process.version): string | undefined {
  if (typeof globalThis.WebSocket === 'function') return undefined;
  return (
    `svc listen: this Node.js (${version}) has no WebSocket client, which svc listen receives your events ` +
    'through: run it on Node.js 22.4 or newer (node --version). Nothing was opened.'
  );
}

/** Holds one stream until it ends; never throws for what happens on it. */
export function holdStream(options: StreamOptions, stop: AbortSignal): Promise<StreamEnd> {
  // Node's WebSocket (undici) takes headers in its second argument; the DOM typing does not say so.
  const socket = new WebSocket(streamUrl(options.baseUrl, options.streamPath), {
    headers: { authorization: `Bearer ${options.token}` },
  } as never);
  let opened = false;
  let ready = false;
  // What the service waits for each result; its `ready` says.
  let timeoutMs = 10_000;
  const onStop = () => socket.close(1000, 'svc listen stopped');
  stop.addEventListener('abort', onStop, { once: true });
  socket.addEventListener('open', () => {
    opened = true;
  });
  socket.addEventListener('message', (event) => {
    let message: { type?: string; timeoutMs?: number };
    try {
      message = JSON.parse(String(event.data));
    } catch {
      return;
    }
    if (message.type === 'ready') {
      if (typeof message.timeoutMs === 'number') timeoutMs = message.timeoutMs;
      ready = true;
      options.onReady();
    } else if (message.type === 'attempt') {
      const attempt = message as StreamAttempt;
      void forwardAttempt(attempt, options.forwardTo, timeoutMs, options.fetch).then((result: AttemptResult) => {
        options.out(attemptLine(attempt, result, new Date()));
        if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(result));
      });
    }
  });
  return new Promise<StreamEnd>((resolve) => {
    socket.addEventListener('close', (event) => {
      stop.removeEventListener('abort', onStop);
      resolve({ opened, ready, code: event.code, reason: event.reason });
    });
  });
}
