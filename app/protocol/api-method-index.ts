import { LAB_METHODS } from '../lab/lab-api-methods.js';
import type { MethodDeclaration } from './api-declaration.js';
import { WORKBENCH_METHODS } from './api-methods.js';

/** Where a request type is declared: the workbench's methods, or the Lab's (WorkbenchApi's `lab`). */
export interface DeclaredMethod {
  readonly group: 'workbench' | 'lab';
  /** the client function's name (`listFolder`, `startSweep`) */
  readonly name: string;
  readonly declaration: MethodDeclaration;
}

const BY_TYPE: ReadonlyMap<string, DeclaredMethod> = new Map<string, DeclaredMethod>([
  ...Object.entries(WORKBENCH_METHODS).map(([name, declaration]) => [declaration.type, { group: 'workbench', name, declaration }] as const),
  ...Object.entries(LAB_METHODS).map(([name, declaration]) => [declaration.type, { group: 'lab', name, declaration }] as const),
]);

/** The declaration of request type `type`, or undefined for a type the API does not have. */
export function declaredMethod(type: string): DeclaredMethod | undefined {
  return BY_TYPE.get(type);
}
