import { describe, expect, it } from 'vitest';
import { jsonSyntaxProblem } from './json-syntax.js';

function problemOf(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return jsonSyntaxProblem(error, text);
  }
  throw new Error('expected invalid JSON');
}

describe('jsonSyntaxProblem', () => {
  it('keeps the position and drops the text V8 quotes (issue 9, failure 8: no foreign content in errors)', () => {
    const secret = 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1';
    const problem = problemOf(secret);
    expect(problem).not.toMatch(/root|daemon|bash/);
    expect(problemOf('{"a": 1,\n "b" 2}')).toBe(' at line 2, column 6 (position 14)');
    expect(problemOf('{"a": [1, 2')).toMatch(/ends too soon|position/);
  });
});
