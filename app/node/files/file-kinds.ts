/**
 * Every kind of file kvscope opens, with the most it reads of it and whether a symbolic link is
 * followed. The caps sit far above real files (a config.json is a few kB, the largest published
 * tokenizer.json about 35 MB) and far below what would exhaust memory or wedge a host: a file past
 * its cap is refused with what it is and what to do, never read.
 */
export type FileKind =
  | 'config' | 'generation-config' | 'tokenizer' | 'tokenizer-config' | 'chat-template'
  | 'npy' | 'onnx' | 'run-record' | 'recent-models' | 'prompt' | 'manifest' | 'input' | 'layer-map';

export interface FileRule {
  /** what the file is, in messages: "a model config (config.json)" */
  readonly label: string;
  /** the most bytes read; null: any size (kvscope reads only a header, the runtime the rest) */
  readonly maxBytes: number | null;
  /**
   * Model folders are often links into a download cache (Hugging Face's snapshots are symlinks to
   * blobs), so links there are followed; kvscope's own data folder holds only files it wrote, so a
   * link there is someone else's file and is refused (its content must never show in an error).
   */
  readonly followLinks: boolean;
  /** what to do when the file is too large */
  readonly fix: string;
}

const MiB = 1024 * 1024;

export const FILE_RULES: Readonly<Record<FileKind, FileRule>> = {
  config: { label: 'a model config (config.json)', maxBytes: 16 * MiB, followLinks: true, fix: 'Use the config.json of the model\'s repository (a few kilobytes).' },
  'generation-config': { label: 'a generation config (generation_config.json)', maxBytes: 4 * MiB, followLinks: true, fix: 'Use the generation_config.json of the model\'s repository, or delete it to fall back to config.json.' },
  tokenizer: { label: 'a tokenizer (tokenizer.json)', maxBytes: 256 * MiB, followLinks: true, fix: 'Use the tokenizer.json of the model\'s repository.' },
  'tokenizer-config': { label: 'a tokenizer config (tokenizer_config.json)', maxBytes: 64 * MiB, followLinks: true, fix: 'Use the tokenizer_config.json of the model\'s repository.' },
  'chat-template': { label: 'a chat template (chat_template.jinja)', maxBytes: 4 * MiB, followLinks: true, fix: 'Use the chat template of the model\'s repository, or remove the file to use tokenizer_config.json\'s.' },
  // fs.readFile's own ceiling is 2 GiB; a KV tensor that big belongs in a memory-mapped format anyway.
  npy: { label: 'a NumPy array (.npy)', maxBytes: 2 * 1024 * MiB - 1, followLinks: true, fix: 'Save a smaller tensor (one layer, fewer positions) with numpy.save.' },
  onnx: { label: 'an ONNX graph (.onnx)', maxBytes: null, followLinks: true, fix: '' },
  'run-record': { label: 'a run record', maxBytes: 256 * MiB, followLinks: false, fix: 'Move the file out of the runs folder: kvscope writes its records itself.' },
  'recent-models': { label: 'the recent-models list (recent.json)', maxBytes: 1 * MiB, followLinks: false, fix: 'Delete recent.json: kvscope writes a new one on the next open.' },
  prompt: { label: 'a prompt (--prompt-file)', maxBytes: 64 * MiB, followLinks: true, fix: 'Pass a shorter prompt; a model\'s context is far smaller than this anyway.' },
  // A layer map is one line per decoder layer (a few hundred bytes); a YAML parser on megabytes takes minutes.
  'layer-map': { label: 'a layer map (--layer-map)', maxBytes: 1 * MiB, followLinks: true, fix: 'A layer map has one entry per decoder layer, a few hundred bytes: write one with kvscope preflight --write-layer-map, or by hand.' },
  input: { label: 'an input file', maxBytes: 64 * MiB, followLinks: true, fix: 'Pass a smaller file.' },
  manifest: { label: 'a cache manifest', maxBytes: 1 * MiB, followLinks: false, fix: 'Delete the cached folder: kvscope builds it again.' },
};
