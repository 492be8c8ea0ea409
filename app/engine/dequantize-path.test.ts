import { describe, expect, it } from 'vitest';
import { chooseDequantizePath } from './dequantize-path.js';

describe('the graph-vs-host decision', () => {
  const graph = async () => ({ session: 'rewritten' });
  const refused = async () => ({ reason: 'the in-graph path does not express the kvscope extension(s) sink tokens' });

  it('opens the graph by default and when asked, and never opens it for host', async () => {
    expect(await chooseDequantizePath(undefined, graph, 'run')).toEqual({ path: 'graph', opened: { session: 'rewritten' } });
    expect(await chooseDequantizePath('graph', graph, 'evaluate')).toEqual({ path: 'graph', opened: { session: 'rewritten' } });
    let opened = false;
    expect(await chooseDequantizePath('host', async () => ((opened = true), { session: 'x' }), 'run')).toEqual({ path: 'host', reason: undefined });
    expect(opened).toBe(false);
  });

  it('falls back to host with the reason by default, and refuses an explicit graph with it (run and eval words)', async () => {
    expect(await chooseDequantizePath(undefined, refused, 'evaluate')).toEqual({ path: 'host', reason: 'the in-graph path does not express the kvscope extension(s) sink tokens' });
    await expect(chooseDequantizePath('graph', refused, 'run')).rejects.toMatchObject({
      message: '--dequantize graph cannot run these settings: the in-graph path does not express the kvscope extension(s) sink tokens.',
      fix: expect.stringMatching(/^Run with --dequantize host/),
    });
    await expect(chooseDequantizePath('graph', refused, 'evaluate')).rejects.toMatchObject({
      message: expect.stringMatching(/^--dequantize graph cannot evaluate these settings: /), fix: expect.stringMatching(/^Evaluate with --dequantize host/),
    });
  });
});
