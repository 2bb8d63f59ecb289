/**
 * A process that keeps putting large objects into a local store (`<dir>/big-<n>.parquet`), for a
 * test to kill with SIGKILL while a put's temporary file is still being written. Prints `READY`
 * before the first put.
 */
import { createLocalStore } from '../../src/storage/index.js'

const [dir = '', mbArg = '16'] = process.argv.slice(2)
const store = createLocalStore(dir)
const bytes = new Uint8Array(Number(mbArg) * 1024 * 1024).fill(7)
process.stdout.write('READY\n')
for (let n = 0; ; n++) await store.put(`big-${n}.parquet`, bytes)
