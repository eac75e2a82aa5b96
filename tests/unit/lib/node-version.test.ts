/** A start on a Node.js older than the supported line is warned of (src/lib/entry-point.ts), not refused. */
import { describe, expect, it } from 'vitest';
import { SUPPORTED_NODE_MAJOR, unsupportedNodeWarning } from '../../../src/lib/entry-point.js';

describe('unsupportedNodeWarning', () => {
  it('warns on a line older than the supported one, naming the version and the line', () => {
    const warning = unsupportedNodeWarning('20.20.2');
    expect(warning).toMatch(/^warning: this is Node\.js 20\.20\.2, past its end of life/);
    expect(warning).toContain(`Node.js ${SUPPORTED_NODE_MAJOR} or newer`);
    expect(unsupportedNodeWarning('v18.0.0')).toBeDefined();
  });

  it('says nothing on the supported lines and newer, nor for a version it cannot read', () => {
    for (const version of ['22.0.0', '22.23.3', '24.1.0', '26.10.0', 'v27.0.0-pre', 'unknown'])
      expect(unsupportedNodeWarning(version), version).toBeUndefined();
  });

  it('the supported line is the one package.json declares', async () => {
    const { engines } = (await import('../../../package.json', { with: { type: 'json' } })).default as {
      engines: { node: string };
    };
    expect(engines.node).toBe(`>=${SUPPORTED_NODE_MAJOR}`);
  });
});
