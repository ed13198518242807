import { ProblemError } from '../../shared/errors.js';

/** The ProblemError `run` throws; rethrows anything else, and fails when `run` returns. */
export function thrownProblem(run: () => unknown): ProblemError {
  try {
    run();
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('expected a ProblemError');
}
