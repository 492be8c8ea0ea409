import { ConfigError } from '../errors.js';
import { getAttribute } from './attribute-map.js';
import { describeValue, type ConfigObject } from './config-object.js';
import { writtenNonFinite } from './json-text.js';

/**
 * Typed reads of config attributes (through the attribute map, as `getattr` does). `where` names the
 * file and sub-config for messages, e.g. `config.json (text_config)`. Absent and JSON null both read
 * as null, because transformers' checks are `getattr(config, name, None) is not None`.
 */

export function optionalInteger(config: ConfigObject, name: string, where: string): number | null {
  const value = getAttribute(config, name);
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  throw new ConfigError(`${where}: \`${name}\` should be an integer but is ${describeField(config, value)}. Fix it in config.json.`);
}

export function requiredPositiveInteger(config: ConfigObject, name: string, where: string, fix: string): number {
  const value = optionalInteger(config, name, where);
  if (value === null) {
    throw new ConfigError(`${where} has no \`${name}\`, which kvscope needs (as transformers does). ${fix}`);
  }
  if (value < 1) throw new ConfigError(`${where}: \`${name}\` should be at least 1 but is ${value}. ${fix}`);
  return value;
}

export function optionalBoolean(config: ConfigObject, name: string, where: string): boolean | null {
  const value = getAttribute(config, name);
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value;
  throw new ConfigError(`${where}: \`${name}\` should be true or false but is ${describeValue(value)}. Fix it in config.json.`);
}

export function optionalStringList(config: ConfigObject, name: string, where: string): readonly string[] | null {
  const value = getAttribute(config, name);
  if (value === undefined || value === null) return null;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value as readonly string[];
  throw new ConfigError(`${where}: \`${name}\` should be a list of strings but is ${describeValue(value)}. Fix it in config.json.`);
}

export function optionalIntegerList(config: ConfigObject, name: string, where: string): readonly number[] | null {
  const value = getAttribute(config, name);
  if (value === undefined || value === null) return null;
  if (Array.isArray(value) && value.every((item) => typeof item === 'number' && Number.isInteger(item))) return value as readonly number[];
  throw new ConfigError(`${where}: \`${name}\` should be a list of integers but is ${describeValue(value)}. Fix it in config.json.`);
}

/** The value as config.json wrote it: the key holding it is found again (the attribute map may have renamed it). */
function describeField(config: ConfigObject, value: unknown): string {
  const key = Object.keys(config).find((name) => Object.is(config[name], value));
  return describeValue(value, key === undefined ? undefined : writtenNonFinite(config, key));
}
