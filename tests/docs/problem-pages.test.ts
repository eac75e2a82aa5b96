import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_TYPES } from '../../src/http/problem-types.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const ELSEWHERE = 'https://errors.site-services.example/problems';

let t: TestApp;
beforeAll(async () => {
  // The problem type addresses may point elsewhere; the pages are served here all the same.
  t = await startTestApp({ config: { problemBaseUrl: ELSEWHERE } });
});
afterAll(async () => t?.close());

function escaped(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

describe('problem type pages', () => {
  it('explain every problem type: title, status, meaning and what to do', async () => {
    for (const [slug, problem] of Object.entries(PROBLEM_TYPES)) {
      const page = await t.http.get(`/problems/${slug}`);
      expect(page.status, slug).toBe(200);
      expect(page.contentType).toBe('text/html; charset=utf-8');
      expect(page.text).toContain(`<h1>${escaped(problem.title)}</h1>`);
      expect(page.text).toContain(`HTTP ${problem.status} `);
      expect(page.text).toContain('<h2>What it means</h2>');
      expect(page.text).toContain(`<h2>What to do</h2>\n<p>${escaped(problem.help)}</p>`);
      expect(page.text).toContain(`<code>${ELSEWHERE}/${slug}</code>`);
    }
  });

  it('are listed on an index, with and without the trailing slash', async () => {
    for (const path of ['/problems/', '/problems']) {
      const index = await t.http.get(path);
      expect(index.status).toBe(200);
      expect(index.contentType).toBe('text/html; charset=utf-8');
      for (const slug of Object.keys(PROBLEM_TYPES))
        expect(index.text).toContain(`<a href="/problems/${slug}"><code>${slug}</code></a>`);
    }
  });

  it('load nothing from elsewhere', async () => {
    const page = await t.http.get('/problems/not-found');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.text).not.toMatch(/<(script|img)\b/);
    expect(page.text.match(/<link\b[^>]*>/g)).toEqual(['<link rel="icon" href="data:,">']);
  });
});
