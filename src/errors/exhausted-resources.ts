/**
 * The library's one way of reporting that no file descriptor was left, for the layers that meet
 * the system's error (the local store, the staging cache, the data plane). Internal: not part of
 * the public exports.
 */
import { ResourceExhaustedError } from './storage-errors.js'

/**
 * The error for a call that failed with EMFILE or ENFILE.
 *
 * @param errno - `EMFILE` (this process's limit) or `ENFILE` (the machine's)
 * @param what - what could not be done, e.g. `read /t/_delta_log/00.json`
 * @param cause - the system error
 * @returns the error to throw
 */
export function fileDescriptorsExhausted(
  errno: string,
  what: string,
  cause: unknown,
): ResourceExhaustedError {
  const scope = errno === 'ENFILE' ? 'the machine' : 'the process'
  return new ResourceExhaustedError(
    'file-descriptors',
    `Could not ${what}: ${scope} has no file descriptor left (${errno})`,
    {
      errno,
      cause,
      hint: `Something holds files open: finish or break out of scans you start, close tables you open (table.close()), or raise the limit (ulimit -n, now for ${scope}).`,
    },
  )
}
