import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TensorProto_DataLocation } from 'onnx-buf';
import { decodeModel, encodeModel } from '../../onnx/onnx-model.js';
import { storiesDir } from './stories.js';

/**
 * Model folders broken in one way each: stories260k copied, then one file replaced. The bad-input
 * catalogue (issue 9) runs every CLI command and serve request that reads a model against them.
 * `expect`: what a user must see: `ok` (the model still works), or a pattern of the message.
 */
export interface BadModelFolder {
  readonly name: string;
  readonly path: string;
  /** null: the model still opens and runs (the fault is survivable, e.g. an 8 MB string in config.json) */
  readonly message: RegExp | null;
}

const STORIES_CONFIG = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', bos_token_id: 1, eos_token_id: 2, head_dim: 8, hidden_size: 64,
  intermediate_size: 172, max_position_embeddings: 512, num_attention_heads: 8, num_hidden_layers: 5, num_key_value_heads: 4,
  rms_norm_eps: 1e-5, rope_theta: 10000, tie_word_embeddings: true, torch_dtype: 'float32', vocab_size: 512,
};

export function mkfifo(path: string): boolean {
  return spawnSync('mkfifo', [path]).status === 0;
}

type Breaker = (folder: string) => boolean;

const replace = (file: string, content: string | Buffer): Breaker => (folder) => {
  rmSync(join(folder, file), { force: true, recursive: true });
  writeFileSync(join(folder, file), content);
  return true;
};
const fifo = (file: string): Breaker => (folder) => {
  rmSync(join(folder, file), { force: true });
  return mkfifo(join(folder, file));
};
const devZero = (file: string): Breaker => (folder) => {
  rmSync(join(folder, file), { force: true });
  symlinkSync('/dev/zero', join(folder, file));
  return true;
};
const remove = (file: string): Breaker => (folder) => {
  rmSync(join(folder, file), { force: true, recursive: true });
  return true;
};
const config = (text: string): Breaker => replace('config.json', text);

/**
 * stories260k's graph with its embedding table moved to `onnx/model.onnx_data` (as onnx.save_model's
 * external data), then that file replaced by a FIFO: what onnxruntime would open, and block on.
 */
const externalDataFifo: Breaker = (folder) => {
  const graphPath = join(folder, 'onnx', 'model.onnx');
  const model = decodeModel(readFileSync(graphPath));
  const table = model.graph!.initializer.find((tensor) => tensor.name === 'm.embed_tokens.weight')!;
  table.externalData = [
    { $typeName: 'onnx.StringStringEntryProto', key: 'location', value: 'model.onnx_data' },
    { $typeName: 'onnx.StringStringEntryProto', key: 'offset', value: '0' },
    { $typeName: 'onnx.StringStringEntryProto', key: 'length', value: String(table.rawData.length) },
  ];
  table.dataLocation = TensorProto_DataLocation.EXTERNAL;
  table.rawData = new Uint8Array(0);
  writeFileSync(graphPath, encodeModel(model));
  rmSync(join(folder, 'onnx', 'model_fp16.onnx'));
  return mkfifo(join(folder, 'onnx', 'model.onnx_data'));
};
const withConfig = (extra: Record<string, unknown>): string => JSON.stringify({ ...STORIES_CONFIG, ...extra });

/** name → how to break the folder → what must be said. */
export const BAD_MODEL_FOLDERS: readonly (readonly [string, Breaker, RegExp | null])[] = [
  // the failures
  ['config.json is a FIFO', fifo('config.json'), /config\.json is a FIFO \(named pipe\), not a regular file/],
  ['config.json links to /dev/zero', devZero('config.json'), /config\.json is a character device, not a regular file/],
  ['config.json is 17 MiB', config(`${withConfig({}).slice(0, -1)}, "padding": "${'x'.repeat(17 * 2 ** 20)}"}`), /config\.json is too large for a model config \(config\.json\): 17\.0 MiB, more than the 16\.0 MiB/],
  ['config.json has an 8 MB string', config(`${withConfig({}).slice(0, -1)}, "notes": "${'x'.repeat(8 * 10 ** 6)}"}`), null],
  ['config.json nests 200k levels', config(`${withConfig({}).slice(0, -1)}, "deep": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`), /is not valid JSON: the values are nested too deep \(more than 1000 levels/],
  ['num_hidden_layers is NaN', config(withConfig({ num_hidden_layers: 0 }).replace('"num_hidden_layers":0', '"num_hidden_layers":NaN')), /`num_hidden_layers` should be an integer but is NaN/],
  ['num_hidden_layers is 1e309', config(withConfig({ num_hidden_layers: 0 }).replace('"num_hidden_layers":0', '"num_hidden_layers":1e309')), /`num_hidden_layers` should be an integer but is 1e309/],
  ['tokenizer.json is a FIFO', fifo('tokenizer.json'), /tokenizer\.json is a FIFO \(named pipe\), not a regular file/],
  ['tokenizer.json links to /dev/zero', devZero('tokenizer.json'), /tokenizer\.json is a character device, not a regular file/],
  ['generation_config.json is a FIFO', fifo('generation_config.json'), /generation_config\.json is a FIFO \(named pipe\)/],
  ['chat_template.jinja is a FIFO', fifo('chat_template.jinja'), /chat_template\.jinja could not be read: .*is a FIFO \(named pipe\)/],
  ['config.json is a folder', (folder) => { rmSync(join(folder, 'config.json')); mkdirSync(join(folder, 'config.json')); return true; }, /config\.json is a folder, not a regular file/],
  // the probe's passing rows
  ['config.json has a trailing comma', config('{"model_type": "llama", "num_hidden_layers": 5,}'), /config\.json is not valid JSON: expected a double-quoted property name at line 1, column \d+ \(position \d+\)/],
  ['config.json is cut short', config(withConfig({}).slice(0, 100)), /config\.json is not valid JSON: .*at line 1/],
  ['config.json is empty', config(''), /config\.json is not valid JSON: the text ends where a value was expected/],
  ['config.json is not an object', config('[1, 2]'), /should hold a JSON object \(a model config\) but holds a list of 2/],
  ['config.json has no num_hidden_layers', config(JSON.stringify({ ...STORIES_CONFIG, num_hidden_layers: undefined })), /has no `num_hidden_layers`/],
  ['num_hidden_layers is a string', config(withConfig({ num_hidden_layers: '5' })), /`num_hidden_layers` should be an integer but is "5"/],
  ['config.json is missing', remove('config.json'), /has neither config\.json nor genai_config\.json/],
  ['tokenizer.json is missing', remove('tokenizer.json'), /has no tokenizer\.json/],
  ['tokenizer.json is not JSON', replace('tokenizer.json', '{"model": '), /tokenizer\.json is not valid JSON/],
  ['generation_config.json is not JSON', replace('generation_config.json', 'eos_token_id = 2'), /generation_config\.json is not valid JSON/],
  ['model.onnx is random bytes', (folder) => { writeFileSync(join(folder, 'onnx', 'model.onnx'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251))); rmSync(join(folder, 'onnx', 'model_fp16.onnx')); return true; }, /onnx|protobuf|model/i],
  ['model.onnx is empty', (folder) => { writeFileSync(join(folder, 'onnx', 'model.onnx'), ''); rmSync(join(folder, 'onnx', 'model_fp16.onnx')); return true; }, /onnx|model/i],
  ['model.onnx is a Git LFS pointer', (folder) => { writeFileSync(join(folder, 'onnx', 'model.onnx'), 'version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n'); rmSync(join(folder, 'onnx', 'model_fp16.onnx')); return true; }, /is a Git LFS pointer, not the model itself|is not a readable ONNX/],
  ['no .onnx graph', remove('onnx'), /has a config\.json but no \.onnx graph/],
  ['model.onnx_data is a FIFO', externalDataFifo, /model\.onnx_data is a FIFO \(named pipe\), not a regular file: kvscope reads an ONNX graph/],
  ['model.onnx is a FIFO', (folder) => { rmSync(join(folder, 'onnx'), { recursive: true }); mkdirSync(join(folder, 'onnx')); return mkfifo(join(folder, 'onnx', 'model.onnx')); }, /has a config\.json but no \.onnx graph/],
];

/** Builds every bad folder under `root` (skipping the FIFO ones where mkfifo is missing). */
export function buildBadModelFolders(root: string): BadModelFolder[] {
  const folders: BadModelFolder[] = [];
  BAD_MODEL_FOLDERS.forEach(([name, breaker, message], index) => {
    const path = join(root, `bad-${String(index).padStart(2, '0')}`);
    cpSync(storiesDir(), path, { recursive: true });
    spawnSync('chmod', ['-R', 'u+w', path]);
    if (breaker(path)) folders.push({ name, path, message });
  });
  return folders;
}
