/**
 * The entry point of a writer process, forked by the race harness: it reads its task from the
 * first argument (JSON; its table location from the environment, see RACE_LOCATION_ENV), tells the harness over IPC when it is ready, waits for the start signal
 * (which carries the deadline) and runs the writer loop. The exit code is 0 when the loop ended
 * normally and 1 on a failure the loop could not turn into a logged abort.
 */
import { InvalidArgumentError } from '../index.js'
import { RACE_LOCATION_ENV, runWriter, type WriterTask } from './writer.js'

/** The harness's start signal. */
interface StartMessage {
  readonly type: 'start'
  readonly deadline: number
}

const raw = process.argv[2]
if (raw === undefined) {
  throw new InvalidArgumentError('The race worker needs its task as its first argument', { argument: 'task' })
}
const argvTask = JSON.parse(raw) as WriterTask
const location = process.env[RACE_LOCATION_ENV]
delete process.env[RACE_LOCATION_ENV]
const task: WriterTask =
  location === undefined ? argvTask : { ...argvTask, config: { ...argvTask.config, location } }

function awaitStart(): Promise<number> {
  return new Promise((resolve) => {
    process.on('message', (m: StartMessage) => {
      if (m?.type === 'start') resolve(m.deadline)
    })
    process.send?.({ type: 'ready' })
  })
}

try {
  await runWriter(task, awaitStart)
  process.exitCode = 0
} catch (err) {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  process.exitCode = 1
} finally {
  // The IPC channel would keep the process alive.
  if (process.connected) process.disconnect()
}
