import type { z } from 'zod';
import type { LabSweepHandlers } from '../lab/lab-api.js';
import type { RequestId } from './messages.js';
import type { RunEventHandlers } from './workbench-api.js';

/**
 * How one API method is declared (api-methods.ts lists them all), and what follows from the list:
 * the request and result types, the functions of a client (WorkbenchApi, the preload's bridge), the
 * request a call becomes and the call a request becomes on the host. Adding a method is one entry in
 * the list and its handler on the backend; both clients, the preload, the validation and the
 * dispatch are derived here.
 */

/** A method's result type, declared without a value (results are the backend's domain types). */
export interface Returns<T> {
  readonly result?: T;
}

export function returns<T>(): Returns<T> {
  return {};
}

/** The events a method streams after its result, by the handlers a caller passes last. */
export interface StreamHandlers {
  readonly run: RunEventHandlers;
  readonly sweep: LabSweepHandlers;
}

export interface MethodDeclaration {
  /** the request's `type` on the wire */
  readonly type: string;
  /** the request's fields, in the order they are checked (the first problem is the one reported) */
  readonly params: z.ZodObject;
  /** the client function's parameters, in order, each a field of the request; `name?` when optional (trailing) */
  readonly args: readonly string[];
  /** fields passed in one optional last argument, `{ sequenceLengths }`, rather than one by one */
  readonly options?: readonly string[];
  readonly returns: Returns<unknown>;
  /** the result travels as null and the client resolves with nothing */
  readonly void?: true;
  /** results cross JSON: one that holds non-finite numbers is read back (and checked) by the client */
  readonly readResult?: (value: unknown) => unknown;
  /** events follow the result, tagged with the request's id */
  readonly stream?: keyof StreamHandlers;
}

export type MethodTable = Readonly<Record<string, MethodDeclaration>>;

/** Declares one method, keeping its literal types for the derivations below. */
export function method<const M extends MethodDeclaration>(declaration: M): M {
  return declaration;
}

// ---- derived types -----------------------------------------------------------------------------

/** A method's fields; `{}` (no index signature) for a method without any. */
export type ParamsOf<M extends MethodDeclaration> = string extends keyof z.output<M['params']> ? Record<never, never> : z.output<M['params']>;
export type ResultOf<M extends MethodDeclaration> = M['returns'] extends Returns<infer R> ? R : never;

type Field<P, K> = K extends keyof P ? P[K] : never;
type ArgTuple<A extends readonly string[], P> = A extends readonly [infer H extends string, ...infer R extends readonly string[]]
  ? H extends `${infer K}?` ? [Field<P, K>?, ...ArgTuple<R, P>] : [Field<P, H>, ...ArgTuple<R, P>]
  : [];
type OptionsArg<M extends MethodDeclaration> = M['options'] extends readonly (infer K extends string)[]
  ? [options?: Pick<ParamsOf<M>, K & keyof ParamsOf<M>>]
  : [];
type StreamArg<M extends MethodDeclaration> = M['stream'] extends keyof StreamHandlers ? [handlers: StreamHandlers[M['stream']]] : [];

/** The client function's parameters. */
export type ArgsOf<M extends MethodDeclaration> = [...ArgTuple<M['args'], ParamsOf<M>>, ...OptionsArg<M>, ...StreamArg<M>];
/** The host handler's parameters: the same, without the stream's handlers (each host routes events itself). */
export type HandlerArgsOf<M extends MethodDeclaration> = [...ArgTuple<M['args'], ParamsOf<M>>, ...OptionsArg<M>];

type ClientResult<M extends MethodDeclaration> = M['void'] extends true ? void : ResultOf<M>;

/** What a caller sees: one function per method (WorkbenchApi, LabApi). */
export type ClientOf<T extends MethodTable> = { -readonly [K in keyof T]: (...args: ArgsOf<T[K]>) => Promise<ClientResult<T[K]>> };

/** What a host implements: one handler per method (the backend). */
export type HandlersOf<T extends MethodTable> = { -readonly [K in keyof T]: (...args: HandlerArgsOf<T[K]>) => Promise<ClientResult<T[K]>> };

/** One request on the wire, numbered by its client. */
export type RequestOf<M extends MethodDeclaration> = { readonly type: M['type']; readonly id: RequestId } & Readonly<ParamsOf<M>>;
export type RequestsOf<T extends MethodTable> = { [K in keyof T]: RequestOf<T[K]> }[keyof T];
/** What each request's `result` carries, by request type (void results travel as null). */
export type ResultsOf<T extends MethodTable> = { readonly [K in keyof T as T[K]['type']]: T[K]['void'] extends true ? null : ResultOf<T[K]> };

// ---- derived functions -------------------------------------------------------------------------

/** A call's arguments as the request's fields (absent optional arguments are left out, not `undefined`). */
export function argsToParams(declaration: MethodDeclaration, args: readonly unknown[]): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  declaration.args.forEach((arg, index) => {
    if (args[index] !== undefined) params[arg.replace(/\?$/, '')] = args[index];
  });
  const options = args[declaration.args.length] as Readonly<Record<string, unknown>> | undefined;
  for (const key of declaration.options ?? []) {
    if (options?.[key] !== undefined) params[key] = options[key];
  }
  return params;
}

/** A checked request's fields as the handler's arguments. */
export function paramsToArgs(declaration: MethodDeclaration, params: Readonly<Record<string, unknown>>): unknown[] {
  const args = declaration.args.map((arg) => params[arg.replace(/\?$/, '')]);
  if (declaration.options === undefined) return args;
  const options: Record<string, unknown> = {};
  for (const key of declaration.options) {
    if (params[key] !== undefined) options[key] = params[key];
  }
  return [...args, options];
}

/** The stream handlers a call passed last, if the method streams. */
export function streamHandlersOf(declaration: MethodDeclaration, args: readonly unknown[]): StreamHandlers[keyof StreamHandlers] | undefined {
  if (declaration.stream === undefined) return undefined;
  return args[declaration.args.length + (declaration.options === undefined ? 0 : 1)] as StreamHandlers[keyof StreamHandlers];
}

/** How a client sends one request: its body (type and fields) and the stream's handlers, if any. */
export type SendRequest = (
  declaration: MethodDeclaration,
  body: { readonly type: string } & Readonly<Record<string, unknown>>,
  handlers: StreamHandlers[keyof StreamHandlers] | undefined,
  /** the call's own arguments, for a client that forwards them (the renderer's adapter of the preload) */
  args: readonly unknown[],
) => Promise<unknown>;

/**
 * One function per method of `table`, each sending its request through `send` (the preload's IPC,
 * the WebSocket) and resolving with what `send` resolves with: nothing for void methods, unless
 * `keepResult` (the preload hands the reply envelope on as it is).
 */
export function buildClient(table: MethodTable, send: SendRequest, options: { readonly keepResult?: boolean } = {}): Record<string, (...args: unknown[]) => Promise<unknown>> {
  const client: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const [name, declaration] of Object.entries(table)) {
    client[name] = async (...args) => {
      const value = await send(declaration, { type: declaration.type, ...argsToParams(declaration, args) }, streamHandlersOf(declaration, args), args);
      return declaration.void === true && options.keepResult !== true ? undefined : value;
    };
  }
  return client;
}
