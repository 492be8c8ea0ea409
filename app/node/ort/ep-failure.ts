import { ExecutionProviderRefusedError, GenerationError } from '../../engine/engine-errors.js';
import type { ExecutionProviderName } from '../../engine/types.js';
import { readableOrtMessage } from './ort-message.js';

/**
 * WebGPU adapters without the `shader-f16` feature (SwiftShader, many integrated GPUs) cannot
 * compile fp16 kernels; onnxruntime's WebGPU EP says so as "Program Gather requires f16 but the
 * device does not support it" (shader_helper.cc) on the first run of an fp16 graph.
 */
const NO_SHADER_F16 = /requires f16 but the device does not support it|shader-f16|ShaderF16/i;

/** A failed `session.run`, as an error whose fix fits its cause (the execution provider, or the graph). */
export function runFailure(error: unknown, graphName: string, ep: ExecutionProviderName): Error {
  const message = readableOrtMessage(error);
  if (NO_SHADER_F16.test(message)) return noShaderF16(message, graphName);
  return new GenerationError(`onnxruntime failed to run ${graphName}: ${message}`,
    ep === 'cpu'
      ? 'Run `kvscope preflight --config <the model folder>`: it checks the graph\'s inputs and outputs against the model config before any run.'
      : `Try --ep cpu: the ${ep} execution provider may not run every operator of this graph; \`kvscope preflight --config <the model folder>\` checks the graph's inputs and outputs.`,
    error);
}

/** A failed session creation whose cause is the execution provider, or null. */
export function createFailure(message: string, graphName: string): Error | null {
  return NO_SHADER_F16.test(message) ? noShaderF16(message, graphName) : null;
}

function noShaderF16(message: string, graphName: string): ExecutionProviderRefusedError {
  return new ExecutionProviderRefusedError(
    `this WebGPU adapter has no shader-f16, and ${graphName} computes in fp16 (onnxruntime: "${message}").`,
    'Use a graph that computes in fp32 (an fp32 export of the model, not an fp16 or q4f16 variant) or another execution provider (--ep cpu).');
}
