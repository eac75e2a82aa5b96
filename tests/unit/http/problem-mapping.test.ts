/**
 * The one error mapper (src/http/error-handler.ts) without a server: what each kind of error becomes, the
 * problem body (RFC 9457), and the token endpoint's OAuth form of the same problem.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { sendProblem, toProblem } from '../../../src/http/error-handler.js';
import { Problem, problemBody, validationProblem } from '../../../src/http/problem.js';
import { PROBLEM_TYPES } from '../../../src/http/problem-types.js';

const fastifyError = (members: Record<string, unknown>, message = 'an error') =>
  Object.assign(new Error(message), members) as unknown as FastifyError;

describe('errors to problems', () => {
  it('passes a Problem through unchanged', () => {
    const problem = new Problem('version-conflict', 'stale');
    expect(toProblem(problem as unknown as FastifyError)).toBe(problem);
  });

  it.each([
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 'unsupported-media-type', 415],
    ['FST_ERR_CTP_BODY_TOO_LARGE', 'payload-too-large', 413],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 'malformed-request', 400],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 'malformed-request', 400],
    ['FST_ERR_CTP_INVALID_CONTENT_LENGTH', 'malformed-request', 400],
  ])("Fastify's %s is %s (%d)", (code, slug, status) => {
    expect(toProblem(fastifyError({ code }))).toMatchObject({ slug, status });
  });

  it('a schema validation failure is 422 with the field named under its part of the request', () => {
    const error = fastifyError({
      validation: [
        { keyword: 'required', instancePath: '', schemaPath: '#/required', params: { missingProperty: 'name' } },
      ],
      validationContext: 'body',
    });
    expect(toProblem(error)).toMatchObject({
      slug: 'validation-error',
      status: 422,
      errors: { name: ['is required'] },
    });
  });

  it.each([
    ['a refused connection', fastifyError({ code: 'ECONNREFUSED' })],
    ['an administrator shutdown (57P01)', fastifyError({ code: '57P01' })],
    ['too many connections (53300)', fastifyError({ code: '53300' })],
    ['a closed pool', fastifyError({}, 'Connection terminated unexpectedly')],
  ])('the database being unavailable (%s) is 503 with Retry-After', (_, error) => {
    expect(toProblem(error)).toMatchObject({
      slug: 'service-unavailable',
      status: 503,
      headers: { 'retry-after': '5' },
    });
  });

  it.each([
    ['a deadlock (40P01)', '40P01'],
    ['a serialization failure (40001)', '40001'],
  ])('a transaction rolled back for a conflict with a concurrent one (%s) is 503: retry now', (_, code) => {
    const problem = toProblem(fastifyError({ code }));
    expect(problem).toMatchObject({ slug: 'service-unavailable', status: 503, headers: { 'retry-after': '1' } });
    expect(problem!.detail).toMatch(/changed nothing\. Retry it/);
  });

  it.each([
    [400, 'malformed-request'],
    [413, 'payload-too-large'],
    [415, 'unsupported-media-type'],
  ])('another error with status %d is %s', (statusCode, slug) => {
    expect(toProblem(fastifyError({ statusCode }))).toMatchObject({ slug, status: statusCode });
  });

  it('leaves an unexpected error to be a bare 500', () => {
    expect(toProblem(fastifyError({}, 'undefined is not a function'))).toBeUndefined();
    expect(toProblem(fastifyError({ statusCode: 500, code: '23505' }))).toBeUndefined();
  });
});

describe('problem bodies', () => {
  it('every problem type has a 4xx or 5xx status and a title', () => {
    for (const [slug, type] of Object.entries(PROBLEM_TYPES)) {
      expect(type.status, slug).toBeGreaterThanOrEqual(400);
      expect(type.status, slug).toBeLessThan(600);
      expect(type.title.length, slug).toBeGreaterThan(0);
    }
  });

  it('is type (on the problem base), title, status, detail, then errors and extensions', () => {
    const problem = validationProblem({ siteCode: ['is required'], name: ['is too long'] });
    expect(problemBody(problem, 'https://api.example.com/problems')).toEqual({
      type: 'https://api.example.com/problems/validation-error',
      title: 'Validation failed',
      status: 422,
      detail: 'The request has 2 invalid fields: siteCode, name.',
      errors: { siteCode: ['is required'], name: ['is too long'] },
    });
    expect(problemBody(new Problem('not-found', 'gone', { extensions: { x: 1 } }), '/p')).toEqual({
      type: '/p/not-found',
      title: 'Not found',
      status: 404,
      detail: 'gone',
      x: 1,
    });
  });
});

/** A reply that records what sendProblem does with it. */
function recordingReply() {
  const sent: { status?: number; type?: string; headers: Record<string, string>; body?: unknown } = { headers: {} };
  const reply = {
    header: (name: string, value: string) => {
      sent.headers[name] = value;
      return reply;
    },
    code: (status: number) => {
      sent.status = status;
      return reply;
    },
    type: (type: string) => {
      sent.type = type;
      return reply;
    },
    send: (body: unknown) => {
      sent.body = body;
      return reply;
    },
  };
  return { sent, reply: reply as unknown as FastifyReply };
}

const requestTo = (oauthErrors: boolean) =>
  ({ routeOptions: { config: { oauthErrors } } }) as unknown as FastifyRequest;

describe('sending a problem', () => {
  it('is application/problem+json with the problem headers', () => {
    const { sent, reply } = recordingReply();
    const problem = new Problem('rate-limit-exceeded', 'slow down', { headers: { 'retry-after': '7' } });
    sendProblem(requestTo(false), reply, problem, '/p');
    expect(sent).toMatchObject({ status: 429, type: 'application/problem+json; charset=utf-8' });
    expect(sent.headers).toEqual({ 'retry-after': '7' });
    expect(sent.body).toEqual(problemBody(problem, '/p'));
  });

  it.each([
    [new Problem('unauthorized', 'bad client'), 'invalid_client'],
    [new Problem('malformed-request', 'bad body'), 'invalid_request'],
    [new Problem('service-unavailable', 'later'), 'temporarily_unavailable'],
    [new Problem('internal-error', 'oops'), 'server_error'],
    [new Problem('forbidden', 'no', { extensions: { error: 'invalid_scope' } }), 'invalid_scope'],
  ])('on the token endpoint adds OAuth error %s and is not cached', (problem, error) => {
    const { sent, reply } = recordingReply();
    sendProblem(requestTo(true), reply, problem, '/p');
    expect(sent.type).toBe('application/json; charset=utf-8');
    expect(sent.headers['cache-control']).toBe('no-store');
    expect(sent.body).toMatchObject({ status: problem.status, error, error_description: problem.detail });
  });
});
