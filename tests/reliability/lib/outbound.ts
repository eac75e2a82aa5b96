/**
 * Counts the TCP connections this process opens to anywhere but the expected peers (the app under test,
 * PostgreSQL): the `net.client.socket` diagnostics channel sees every client socket Node creates,
 * undici's included, so a token check that fetched a key (jku, x5u) would show here.
 */
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

export interface OutboundCounter {
  connections(): string[];
  stop(): void;
}

export function countOutbound(expectedPorts: () => number[]): OutboundCounter {
  const seen: string[] = [];
  const onSocket = (message: unknown) => {
    const socket = (message as { socket: Socket }).socket;
    socket.once('connect', () => {
      if (!expectedPorts().includes(socket.remotePort ?? -1)) seen.push(`${socket.remoteAddress}:${socket.remotePort}`);
    });
  };
  diagnostics.subscribe('net.client.socket', onSocket);
  return { connections: () => [...seen], stop: () => diagnostics.unsubscribe('net.client.socket', onSocket) };
}
