import { SeededRandom } from '../../synthetic/seeded-random.js';
import { FILLER } from './filler.js';
import { depthIndex, fitFiller } from './fit-length.js';
import { fill } from './niah.js';
import { checkRequest, type NeedlePlacement, type RetrievalRequest, type RetrievalSample } from './retrieval-task.js';

/*
 * RULER's variable tracking (NVIDIA/RULER scripts/data/synthetic/variable_tracking.py, template and
 * answer prefix from scripts/data/synthetic/constants.py `TASKS['variable_tracking']`, its spelling
 * "assgined" kept): one chain of 4 hops (synthetic.yaml `vt`: num_chains 1, num_hops 4), five
 * 5-letter variables, "VAR A = 12345" then "VAR B = VAR A " …, each statement between noise lines
 * that are the filler plus "\n", all joined by spaces. RULER draws the statements' positions at
 * random; here the first statement (the value) sits at the requested depth and the hops at seeded
 * random positions after it. RULER also prepends a short solved example (its ICL example); kvscope
 * does not, so the prompt is the task alone.
 */
export const VT_TEMPLATE =
  'Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n{context}\nQuestion: Find all variables that are assigned the value {query} in the text above.';
export const VT_ANSWER_PREFIX =
  ' Answer: According to the chain(s) of variable assignment in the text above, {num_v} variables are assgined the value {query}, they are: ';
const HOPS = 4;
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export function generateVariableTracking(request: RetrievalRequest): RetrievalSample {
  checkRequest(request);
  const random = new SeededRandom(request.seed, 'variable-tracking');
  const names = new Set<string>();
  while (names.size < HOPS + 1) {
    // `''.join(random.choices(string.ascii_uppercase, k=5))`, redrawn until distinct
    names.add(Array.from({ length: 5 }, () => LETTERS[random.nextInt(26)]).join(''));
  }
  const variables = [...names];
  // `np.random.randint(10000, 99999)`: the upper bound excluded
  const value = String(10000 + random.nextInt(89999));
  const chain = [`VAR ${variables[0]} = ${value}`, ...variables.slice(1).map((name, j) => `VAR ${name} = VAR ${variables[j]} `)];
  const fractions = chain.slice(1).map(() => random.nextUnit());
  const template = VT_TEMPLATE + VT_ANSWER_PREFIX;
  const noise = `${FILLER}\n`;

  const build = (lines: number) => {
    const first = depthIndex(lines, request.depthPercent);
    const positions = [first, ...fractions.map((f) => first + Math.floor(f * (lines - first + 1))).sort((a, b) => a - b)];
    const sentences: string[] = Array.from({ length: lines }, () => noise);
    // `sentences.insert(insert_pi + j, chain_i[j])` over sorted positions
    positions.forEach((position, j) => sentences.splice(position + j, 0, chain[j]!));
    const context = sentences.join(' ').replaceAll('. \n', '.\n');
    const prompt = fill(template, { context, query: value, num_v: HOPS + 1 });
    const contextStart = prompt.indexOf(context);
    const placements: NeedlePlacement[] = [];
    let searchFrom = contextStart;
    for (const [j, statement] of chain.entries()) {
      const offset = prompt.indexOf(statement, searchFrom);
      placements.push({ text: statement, offset, queried: true, atDepth: j === 0 });
      searchFrom = offset + statement.length;
    }
    return { prompt, placements };
  };
  const fit = fitFiller(build, request.countTokens, request.targetTokens, {
    minUnits: 0, maxUnits: request.targetTokens + 8, unitName: 'noise lines', task: 'variable-tracking',
  });
  return {
    task: 'variable-tracking',
    seed: request.seed,
    prompt: fit.sample.prompt,
    answers: variables,
    needles: fit.sample.placements,
    depthPercent: request.depthPercent,
    promptTokens: fit.promptTokens,
    fillerUnits: fit.units,
  };
}

