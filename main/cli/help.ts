import { RUNTIME_FORMATS } from '../../app/quant/runtime-formats/registry.js';
import { MLX_BITS, MLX_GROUP_SIZES } from '../../app/quant/runtime-formats/mlx-affine.js';
import { ORT_WEBGPU_Q8 } from '../../app/quant/runtime-formats/ort-webgpu.js';
import { ORT_WEBGPU_Q4 } from '../../app/quant/runtime-formats/ort-webgpu-q4.js';

export const HELP_TEXT = `kvscope: KV-cache quantization workbench (headless commands and the browser workbench)

Usage:
  kvscope preflight --config <config.json | genai_config.json | model folder | graph.onnx> [cache options] [--json]
      Checks whether a model can take transformers' QuantizedCache and what would fail; for a
      folder or graph, also its layout and the graph's inputs and outputs (weights never loaded).
      Cache options include the kvscope extensions beyond transformers (see preflight --help).
      Exit 0: a run could start; 2: refused (transformers' exact verdict is printed); 1: bad input.

  kvscope quantize --backend quanto|hqq --nbits N --axis A --group-size G
                   --input x.npy --dequantized out.npy
                   [--codes c.npy] [--scale s.npy] [--zero z.npy] [--json]
      Quantizes a float32/float16 KV tensor [batch, kv_heads, seq, head_dim] exactly as
      optimum-quanto or HQQ do inside transformers, and reports the error.
  kvscope quantize --format F --input x.npy --dequantized out.npy [--blocks b.npy] [--side key|value]
                   [--calculate-kv-scales] [--json]
      A kvscope extension: the same tensor in a serving runtime's own KV format (llama.cpp,
      vLLM/SGLang FP8, NVFP4, MLX, ONNX Runtime WebGPU); see quantize --help for the formats.

  kvscope run --model <model folder | graph.onnx | synthetic | synthetic-hybrid | synthetic-8b-kv> [cache options]
              [--prompt TEXT | --prompt-file FILE] [--chat] [--prompt-ids 1,2,3] [--pad-prompt-to N] [--max-new-tokens N] [--allow-past-positions] [--greedy | --temperature T ...]
              [--dequantize graph|host] [--ignore-eos] [--reference] [--out run.json | run.csv] [--json]
      Generates text with onnxruntime and transformers' QuantizedCache semantics, in a worker
      thread, and reports KV-cache bytes, flushes and quantization error per layer.
      Exit 0: done; 2: refused (the preflight's message is printed); 1: bad input or a failed run.

  kvscope eval --model <model folder | synthetic> [cache options] [--dequantize graph|host] [--text FILE|-]
               [--context N] [--stride N] [--prefill P] [--windows N] [--json] [--out eval.json]
      Scores a cache configuration on a text, teacher-forced, against the full-precision dynamic
      cache: PPL, ΔPPL, KLD, top-1 agreement and Δp as llama.cpp's perplexity tool reports them.
      Exit 0: done; 2: refused (the preflight's message is printed); 1: bad input or a failure.

  kvscope sweep --spec sweep.json --out DIR [--jobs N] [--shard i/N] [--json]
  kvscope sweep --preset layers|kv|runtimes --model M --out DIR [eval's cache options]
  kvscope sweep merge DIR... [--out DIR]
      Evaluates many configurations (one folder per point, results.csv/json derived), resumable;
      shards fan a sweep over machines and merge builds one table from them.

  kvscope cache list [--json]
  kvscope cache prune --older-than 30d | --max-size 10G [--dry-run] [--json]
      Lists kvscope's cache folder (eval references and their graphs, in-graph rewrites, synthetic
      models: what, for which model, size, last use) and prunes eval references by age or total size.

  kvscope serve [--port N] [--host 127.0.0.1] [--data-dir DIR] [--max-runs N]
      Serves the workbench to a browser on this machine and prints its URL (with a per-launch
      token). Runs are saved in the same place as the desktop app's. Ctrl-C stops it.

  kvscope --version
  kvscope <command> --help
`;

/** The kvscope extensions' options, as run and preflight take them (eval names them and points here). */
const EXTENSION_OPTIONS = `kvscope extensions (beyond transformers; all off by default, and at their neutral values a run is
bit-identical to transformers' QuantizedCache; records, panels and summaries name each active one):
  --nbits-key N                bits of the keys' codes (default: --nbits); checked like nbits
  --nbits-value N              bits of the values' codes (default: --nbits)
  --layer-map FILE             per-layer bits, KVTuner's preset format (YAML or JSON):
                               "0: {nbits_key: 8, nbits_value: 4}" per layer, or "full" for a
                               full-precision layer (or one side: "nbits_value: full"), or a
                               side in a runtime format as --kv-format spells it ("format_key:
                               llama.cpp:q8_0", "format_value: …"; a write-once layer); layers
                               not listed use the bits above
  --layer-map-text TEXT        the same map as text (what sweep specs and the Lab carry)
  --full-precision-first N     keep the first N layers' caches in full precision
  --full-precision-last N      keep the last N layers' caches in full precision
  --sink-tokens S              keep each layer's first S tokens in full precision, never
                               re-quantized at a flush (attention sinks; KVQuant, IntactKV)
  --rotate hadamard            rotate keys along head_dim with an orthonormal Hadamard transform
                               before quantizing, and back after dequantizing (block-diagonal
                               when head_dim is not a power of two; refused when it is odd)
  --rotate-values              rotate the values too
  --outliers Q                 keep values above the per-layer magnitude quantile Q (e.g. 0.99)
                               exactly, as a sparse list (KVQuant's dense-and-sparse)
  --kv-format F                a serving runtime's write-once KV format for keys and values, in place of
                               transformers' QuantizedCache: each row quantized once when written, no
                               residual, no re-quantization (the formats: kvscope run --help); runs host;
                               refused where the runtime refuses the model's head_dim, with its reason
  --kv-format-key F, --kv-format-value F
                               the keys' and the values' formats apart (give both)
  --calculate-kv-scales        vLLM FP8's per-tensor scales computed from the prompt (default 1.0)`;

/** Every --format, from the registry: one line each, MLX's bits × groups and llama.cpp's +rot folded. */
const FORMAT_LINES = [
  ...RUNTIME_FORMATS.filter((f) => f.runtime === 'llama.cpp' && !f.name.endsWith('+rot')).map((f) => formatLine(f.name, f.description)),
  formatLine('llama.cpp:<type>+rot', 'any of them after llama.cpp\'s Hadamard rotation (its default since PR #21038)'),
  ...RUNTIME_FORMATS.filter((f) => f.name.startsWith('vllm:') || f.name === 'nvfp4').map((f) => formatLine(f.name, `${f.description}; ${f.runtime}`)),
  formatLine(`mlx:<${MLX_BITS.join('|')}>bit-g<${MLX_GROUP_SIZES.join('|')}>`, 'MLX affine (mlx-lm --kv-bits --kv-group-size): codes, a scale and a bias per group'),
  formatLine(ORT_WEBGPU_Q8.name, ORT_WEBGPU_Q8.description),
  formatLine(ORT_WEBGPU_Q4.name, ORT_WEBGPU_Q4.description),
].join('\n');

function formatLine(name: string, description: string): string {
  return name.length < 23 ? `  ${name.padEnd(23)}${description}` : `  ${name}\n  ${''.padEnd(23)}${description}`;
}

export const COMMAND_HELP: Record<string, string> = {
  eval: `kvscope eval --model <model folder | synthetic | synthetic-hybrid> [options]

Scores a cache on a text, teacher-forced: every window's tokens pass through the cache exactly as
token-by-token generation feeds them (the prefill, then one token a step, flushes where \`run\` has them),
and every prediction is compared with the full-precision dynamic cache's.

Model and cache (as kvscope run):
  --model M, --onnx FILE, --ep cpu|webgpu|cuda|dml|coreml
  --cache dynamic|quantized    (default quantized)
  --backend, --nbits, --axis-key, --axis-value, --group-size, --residual-length, --layer-policy
                               as kvscope run (defaults are transformers' QuantizedCache defaults)
  --dequantize graph|host      where the quantized cache is dequantized, as kvscope run (default graph;
                               the same figures bit for bit; the record's dequantize says which ran,
                               and the lab's --quantize-layers/--quantize-parts targets run host).
                               The reference is the source graph's either way (one cached reference)
  kvscope extensions beyond transformers, off by default, as kvscope run --help describes them:
  --nbits-key, --nbits-value, --layer-map, --full-precision-first, --full-precision-last,
  --sink-tokens, --rotate hadamard, --rotate-values, --outliers Q, --kv-format F,
  --kv-format-key F --kv-format-value F, --calculate-kv-scales (the record names each active one)

Text and windows (llama.cpp's perplexity tool cuts its chunks the same way):
  --text FILE | -        the text (UTF-8; - reads stdin); default: kvscope's own default text.
                         Binary files, other encodings and empty texts are refused before any work;
                         with --windows N only the text those windows cover is tokenized
  --text-ids FILE        the text as token ids (separated by commas or whitespace), for a model
                         folder without tokenizer.json; checked against the graph's vocabulary
  --context N            tokens per window (default 512); each window starts with BOS
  --stride N             tokens between window starts (default: the context, no overlap)
  --prefill P            tokens fed at once before the scored part (default context/2); rows
                         P … context − 2 are scored, one prediction each
  --windows N            evaluate at most N windows (default: all the text holds)
  --feed auto|chunked|token-by-token
                         auto (default): fp32-KV graphs in runs that end at flush steps (same
                         tensors, far faster), fp16-KV graphs one token per run (exact there)

kvscope extension (lab), off by default:
  --quantize-layers L,L…|all   quantize only these layers' cache (the others at full precision)
  --quantize-parts both|key|value
                               quantize keys and values, keys only or values only

Output:
  --json                 one object: tokens, ppl, pplReference, deltaPpl, pplRatio (each with …Error),
                         kld {mean, median, p99, p999, max}, top1Agreement, deltaP {mean, rms},
                         bitsPerValue, storedBytes, layerErrors, timings (docs/eval-record.md)
  --out eval.json        the eval record, written atomically
  --per-token            keep every prediction's NLL, KLD, Δp and top-1 in the record

The reference is computed once per model graph (and its external data), config, tokenizer, text
and window shape (context, stride, prefill), window by window, and cached in
$KVSCOPE_CACHE_DIR/eval-references, else ~/.cache/kvscope/eval-references: any --windows count of
the same text reads the windows stored and adds the missing ones. Each window's sha256 is checked as it
is read (a damaged one is computed again, with a note). The folder is capped at 20 GiB
(KVSCOPE_CACHE_MAX_BYTES), least recently used first; kvscope cache list / prune show and trim it.
Exit codes: 0 done, 2 refused by the preflight, 1 bad input, a failure or Ctrl-C (nothing recorded).

Long-context retrieval (docs/retrieval.md): prompts generated from a seed, nothing downloaded:
  --task passkey|niah-single|niah-multikey|niah-multivalue|variable-tracking|cwe|fwe
                         passkey as landmark-attention's test, the others as RULER's synthetic tasks
  --lengths L,L…         prompt + new tokens per cell, in the model's tokens (1024 or 1k), as RULER
  --depths D,D…          where the needle sits, 0–100 % of the filler (default 0,25,50,75,100)
  --samples N            samples per cell (default 1); --seed S (default 0) derives every sample
  --max-new-tokens N     greedy tokens decoded (default: RULER's tokens_to_generate, passkey 10)
  --chat                 each prompt as one user turn through the model's chat template (as run --chat;
                         the length counts the template's tokens); a model without one is refused
Each sample runs as kvscope run runs a prompt (prefill with the cache options above, then greedy
decoding), and a quantized cache's prompts again with the full-precision dynamic cache; each answer is
scored as RULER scores it (passkey: the first number in the answer) and the maps of accuracy per depth
and length are printed, with their difference (--json: the maps and every sample; --out FILE: the
same as a record, each prompt named by its sha256, its needles, answers, predictions, scores and
stored KV bytes). In kvscope sweep the task and these options are spec keys (kvscope help sweep);
the Lab draws such a sweep's maps.
`,
  sweep: `kvscope sweep --spec sweep.json --out DIR [--jobs N] [--shard i/N] [--json]
kvscope sweep --preset layers|kv|runtimes --model M --out DIR [eval's options, fixed for every point]
kvscope sweep merge DIR... [--out DIR]

The spec: {"model": "…", "text": "file.txt", "fixed": {…}, "grid": {…}, "points": [{…}], "preset": "layers"}.
Keys in fixed, grid and points are kvscope eval's long option names without the dashes
("group-size": 32, "nbits": 4, "axis-key": 1, "dequantize": ["graph", "host"]): grid is a cartesian product of value lists, points adds
single configurations, the sweep is their union (duplicates once). "text" is relative to the spec;
"text-ids": "ids.txt" in its place gives the text as token ids (eval's --text-ids).
A retrieval sweep: "task" (with "lengths", "depths", "samples", "seed") in fixed, grid or points makes
every point kvscope eval --task with its cache (retrieval.json per point; the full-precision reference
decoded once per sweep, kept in retrieval-reference.json); results gain accuracy, accuracy_base and
(json) the depth × length maps. All points have a task or none; they run one at a time.
Presets (a kvscope extension, the lab's sensitivity studies): layers = one layer quantized at a time,
keys only, values only and both, crossed with the grid; kv = keys only vs values only vs both;
runtimes = what the serving runtimes do (llama.cpp q8_0/q4_0 with and without rotation, vLLM fp8 e4m3/e5m2,
NVFP4, MLX 4-bit g64, ONNX Runtime q8/q4) next to transformers' quanto and HQQ 4-bit: the table adds each
format's bits per value as the runtime counts them; results.csv names each point's family and formats.

  --out DIR        one folder per point (settings.json + eval.json, or failure.json for a refused or
                   failed point with its reason), results.csv and results.json derived from them
  --jobs N         points side by side in N job processes (each keeps its session warm), with the
                   cores split between them (default 1: one worker thread); the jobs share one copy
                   of the weights, memory-mapped (each process's RSS counts it once): external data,
                   and weights inside the .onnx (read in place through a cached derived graph; a
                   legacy prefill/decode pair's prefill graph: once per job)
  --shard i/N      only every N-th point, from the i-th: one shard per machine or array task
  merge DIR...     joins shard folders into --out (default the first DIR), identical to one unsharded run

A rerun skips complete points and redoes the others; Ctrl-C cancels the running points (nothing of
them is recorded) and leaves the complete ones. The reference is computed once, before the points,
and cached as kvscope eval caches it ($KVSCOPE_CACHE_DIR/eval-references, else
~/.cache/kvscope/eval-references; kvscope cache list / prune).
Exit codes: 0 done (refused and failed points are results), 1 bad input or interrupted.
`,
  cache: `kvscope cache list [--json]
kvscope cache prune --older-than AGE | --max-size SIZE [--dry-run] [--json]

kvscope's cache folder: $KVSCOPE_CACHE_DIR, else ~/.cache/kvscope. It holds
  eval-references/   the eval and sweep references (one folder per model, text and window shape,
                     one verified file per window). Capped at 20 GiB (KVSCOPE_CACHE_MAX_BYTES, e.g.
                     10G): after each window written, the least recently used references go first
  derived-graphs/    the graphs derived from a model, one folder each, the kind in its key: the
                     rewrite of --dequantize graph, the last-row cut, the eval reference's graph,
                     the graph with its weights inside the .onnx read in place. Each holds the graph
                     alone (its weights are read from the model's files in place), verified on use.
                     Capped at 1 GiB, the least recently used first
  models/            the synthetic models (listed only)
  in-graph/, reference-graphs/
                     an older kvscope's derived graphs: no longer read; any prune removes them
Anything removed is computed again when it is next needed.

  list             every entry: name, size, last use, what it is (model, text, windows)
  prune            removes eval references and derived graphs (and an older kvscope's folders):
  --older-than AGE   not used for AGE (30d, 12h, 90m, 2w)
  --max-size SIZE    the least recently used until they total at most SIZE (10G, 500M)
  --dry-run          say what would be removed, remove nothing
  --json             one object: {ok, root, maxBytes, folders} or {ok, dryRun, removed, freedBytes, remainingBytes}
Exit codes: 0 done, 1 bad input.
`,
  serve: `kvscope serve [--port N] [--host H] [--data-dir DIR] [--max-runs N]

  --port N          the port (default 4310; 0 picks any free port)
  --host H          the address to listen on (default 127.0.0.1: this machine only). Another
                    address makes the workbench reachable from other machines over plain HTTP.
  --data-dir DIR    where runs and recent models are kept (default KVSCOPE_DATA_DIR, else the
                    desktop app's folder: ~/.config/kvscope, ~/Library/Application Support/kvscope,
                    %APPDATA%\\kvscope)
  --max-runs N      runs that go at once (default KVSCOPE_MAX_RUNS, else one per two cores and
                    4 GiB of memory); up to 16 more wait their turn, later ones are refused

Open the printed URL: it carries a token that changes at every launch (set KVSCOPE_SERVE_TOKEN to
32 or more URL-safe characters to keep it); requests without it are refused (401), as are pages
from other sites and other host names (403). The UI comes from
out/renderer: run \`npm run build\` first. WebSocket messages may be up to 32 MiB (a longer
prompt is refused with that reason). Ctrl-C or SIGTERM cancels the runs in progress, saves them
as cancelled and stops the server; a second signal stops at once.
`,
  preflight: `kvscope preflight --config <config.json | genai_config.json | model folder | graph.onnx> [options]

The model: a config file alone (config.json, or an ONNX Runtime GenAI genai_config.json, whose
model.decoder fields give the config transformers would read), or a model folder / graph. For a
folder or graph kvscope also names the layout it recognizes (Hugging Face/Optimum, transformers.js
variant, ONNX Runtime GenAI, Optimum merged decoder or decoder pair), the config it reads, the
graph's precision from its tensor types and its size with all external data, and checks the
graph's inputs and outputs (read from the protobuf header, weights not loaded): anything kvscope
cannot feed (a pre-quantized or paged KV cache, a static cache, an inputs_embeds-only decoder,
bf16 KV, an unknown input) is refused here, before any run.

  --onnx FILE                  the graph of the folder to check (default: the one a run would use)

Options (defaults are transformers' QuantizedCache defaults):
  --backend quanto|hqq         quantization backend (default quanto; case-sensitive, as in transformers)
  --nbits N                    bits per value (quanto: 2, 4; hqq: 1, 2, 3, 4, 8; default 4)
  --axis-key A                 key grouping axis (quanto: 0, -1; hqq: 0, 1; default 0)
  --axis-value A               value grouping axis (default 0)
  --group-size G               q_group_size (default 64)
  --residual-length R          tokens kept in full precision before a flush (default 128)
  --layer-policy all|full-attention-only
                               all: transformers' behaviour (hybrid models are refused);
                               full-attention-only: quantize full-attention layers, keep the others
  --seq-len N[,N...]           prompt lengths to check group-size divisibility for
  --pad-prompt-to N            check the lengths a run with --pad-prompt-to N quantizes: each --seq-len
                               shorter than N becomes N; without --seq-len, N
  --batch N                    batch size for those checks (default 1)
  --write-layer-map FILE       write every layer's resolved bits (and runtime formats) as a KVTuner
                               preset (.yaml) or JSON
  --quantize-layers L,L|all    the lab's targets, as eval takes them (kvscope extension): the plan
  --quantize-parts key|value|both  they make (other layers and sides full) is checked, and
                               --write-layer-map writes it
  --context N[,N...]           the memory what-if: the KV bytes the quantized cache would hold at each
                               context length (up to 1048576), next to a full-precision cache, with
                               bits/value and flushes (the workbench's arithmetic, app/accounting)
  --prompt-tokens N            the what-if's prompt, quantized at prefill (default: the shortest --context)
  --kv-dtype float16|float32   the what-if's K/V dtype, the graph's (default float16)
  --json                       print {"ok", "layerTypes", "diagnostics": [{"code", "severity", "message", "layers"}]},
                               plus "layout" for a folder or graph, and "whatIf" with --context

${EXTENSION_OPTIONS}
Exit codes: 0 a run could start, 2 refused (by transformers' verdict or the graph checks), 1 bad input.
`,
  quantize: `kvscope quantize --backend quanto|hqq --nbits N --axis A --group-size G --input x.npy --dequantized out.npy [options]

  --input x.npy          float32 or float16 tensor, 4-D [batch, kv_heads, seq, head_dim]
  --dequantized out.npy  reconstruction, same shape and dtype as the input
  --codes c.npy          unpacked codes (uint8) in the library's 2-D grouped layout
  --scale s.npy          per-group scale (float32; quanto _scale, hqq meta["scale"])
  --zero z.npy           per-group zero (float32; quanto _shift, hqq meta["zero"])
  --json                 print one JSON object: rel_fro_err, max_abs_err, mean_abs_err, bits_per_value, ...

Backends: quanto nbits 2|4, axis 0|-1; hqq nbits 1|2|3|4|8, axis 0|1.

Serving runtimes' KV formats (a kvscope extension, not transformers' cache):
kvscope quantize --format F --input x.npy --dequantized out.npy [options]
  --format F             the runtime's format, below: each head vector quantized once, as the runtime writes it
  --blocks b.npy         the runtime's own bytes, uint8 [batch·heads·seq, bytes per head vector]
  --side key|value       which cache the tensor is (default key; llama.cpp's +rot rotates them differently,
                         vLLM's --calculate-kv-scales divides keys by 200 and values by 100)
  --calculate-kv-scales  vLLM's per-tensor FP8 scale from the data (default: 1.0, as vLLM without calibration)
  --json                 one JSON object: format, runtime, rel_fro_err, max_abs_err, mean_abs_err, bits_per_value,
                         row_bytes, tensor_scale, ...
Formats:
${FORMAT_LINES}
Exit codes: 0 done, 1 bad input (unreadable file, unsupported dtype, a shape the backend or runtime refuses).
`,
  run: `kvscope run --model <model folder | graph.onnx | synthetic | synthetic-hybrid | synthetic-8b-kv> [options]

Model and runtime:
  --model M              a model folder (Hugging Face/Optimum or transformers.js: config.json and
                         onnx/model*.onnx; ONNX Runtime GenAI: genai_config.json and its model.onnx;
                         legacy Optimum: decoder_model_merged.onnx, or decoder_model.onnx with
                         decoder_with_past_model.onnx), a graph.onnx with its config beside it,
                         or a built-in synthetic model (synthetic, synthetic-hybrid; synthetic-8b-kv:
                         Llama-3-8B's KV geometry, 32 layers of 8 KV heads × 128, on a tiny body;
                         at real scale, random weights built on first use: synthetic-qwen2.5-0.5b
                         (Qwen2.5-0.5B's geometry, vocab 151,936, 2 GB), synthetic-llama3.2-1b (4.9 GB),
                         synthetic-8b-kv-128k (synthetic-8b-kv with a 128,256-token vocabulary);
                         synthetic-retrieval: the retrieval testbed, an induction circuit whose weights
                         are set by construction, exact on eval --task passkey up to 4,096 tokens)
  --onnx FILE            the graph of the folder (e.g. model_fp16.onnx); default: genai_config.json's,
                         else model.onnx, else transformers.js_config's dtype, else the merged decoder
  --ep cpu|webgpu|cuda|dml|coreml
                         execution provider (default cpu)

Cache (defaults are transformers' QuantizedCache defaults):
  --cache dynamic|quantized    full precision, or the quantized cache (default quantized)
  --backend quanto|hqq         quantization backend (default quanto)
  --nbits N                    bits per value (default 4)
  --axis-key A                 key grouping axis (default 0)
  --axis-value A               value grouping axis (default 0)
  --group-size G               q_group_size (default 64)
  --residual-length R          tokens kept in full precision before a flush (default 128)
  --layer-policy all|full-attention-only
                               all: transformers' behaviour; full-attention-only: quantize only
                               full-attention layers (hybrid models)
  --dequantize graph|host      where the quantized cache is dequantized for attention (default graph):
                               graph: inside the ONNX graph, one layer at a time, fed only the codes,
                               scales, zeros and residual (the process holds what transformers holds);
                               host: in JavaScript, every layer's history fed at once. The same logits
                               bit for bit; settings the graph cannot express (HQQ 3-bit, sinks,
                               rotation, outliers, some layouts) run host, and the run's notes say why

${EXTENSION_OPTIONS}
Runtime KV formats (--kv-format F; a kvscope extension):
${FORMAT_LINES}

Generation:
  --prompt TEXT          the prompt (default: empty, only the tokenizer's BOS)
  --prompt-ids 1,2,3     the prompt as token ids, fed as they are (for folders with no tokenizer.json;
                         the generated text is then shown as ids)
  --prompt-file FILE     the prompt from a UTF-8 file (- for standard input), less one final
                         newline; for long prompts, which should not travel on a command line
  --chat                 send the prompt as one user turn through the model's chat template
                         (tokenizer_config.json or chat_template.jinja), as apply_chat_template
  --pad-prompt-to N      left-pad the encoded prompt to N tokens with the pad token, masked out by
                         the attention mask (transformers' padding="max_length", padding_side="left");
                         a prompt of N tokens or more is fed as it is. The workbench offers it when
                         the prompt's length does not split into groups
  --max-new-tokens N     tokens to generate (default 64); the prompt plus these must stay within the
                         model's max_position_embeddings, or the run is refused before it starts
  --allow-past-positions run past max_position_embeddings anyway (the graph runs, but the model was
                         not trained for those positions); a warning is printed before the run
  --greedy               pick the most likely token (the default without sampling flags)
  --temperature T        sample; transformers' defaults apply to the others:
  --top-k K                temperature 1.0, top-k 50 (0 = off), top-p 1.0, seed 0
  --top-p P
  --seed S               the same seed gives the same tokens
  --ignore-eos           keep generating past an EOS token until --max-new-tokens (benchmarks)
  --reference            also replay the tokens through a full-precision cache and report
                         KL divergence and top-1 agreement per step

Output:
  --out FILE             write the run record (JSON, see docs/run-record.md) atomically;
                         a name ending in .csv writes the per-step CSV instead
  --json                 print one JSON object: tokens, text, flushes, kvBytes, baselineBytes,
                         error (per layer, K and V), timings, reference (with --reference),
                         dequantize (quantized runs: graph or host, what ran)

The text streams to stdout; a progress bar goes to stderr when it is a terminal. Ctrl-C cancels
at the next step and still prints the summary (and writes --out), however many signals follow
(SIGTERM alike, as timeout and Slurm send it); SIGKILL stops at once, writing nothing.
Exit codes: 0 done (or cancelled), 2 refused by the preflight or the model checks (a graph kvscope
cannot feed, a config that contradicts the graph), 1 bad input or a failed run.
`,
};
