/**
 * Runs a CommonJS bundle with a V8 code cache: `node <this, bundled> <bundle.cjs> [args...]`.
 *
 * A process that starts hundreds of times (the crash-safety writer) spends about half of each start
 * compiling its bundle; Node 20 caches no compiled code for modules, but a `vm.Script` takes a
 * cache V8 produced for the same source. The cache sits beside the bundle as `<bundle>.cache`.
 * With `DELTA_RLC_WRITE_CODE_CACHE=1` the process writes it at exit, after the run has compiled
 * the functions it called, so a warm-up run that commits caches the commit path too.
 *
 * Without a cache, or with one V8 refuses (another Node version or flags), the bundle is compiled
 * as usual: the cache changes how fast it starts, never what it does. The bundle sees
 * `process.argv` as if it had been started directly.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import Module, { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import { Script } from 'node:vm'

const bundle = resolve(process.argv[2] ?? '')
const cacheFile = `${bundle}.cache`
const cachedData = existsSync(cacheFile) ? readFileSync(cacheFile) : undefined
const script = new Script(Module.wrap(readFileSync(bundle, 'utf8')), {
  filename: bundle,
  ...(cachedData === undefined ? {} : { cachedData }),
})
if (process.env.DELTA_RLC_WRITE_CODE_CACHE === '1') {
  process.once('exit', () => writeFileSync(cacheFile, script.createCachedData()))
}
// [node, loader, bundle, ...args] -> [node, bundle, ...args]
process.argv.splice(1, 1)
const module = { exports: {} }
const run = script.runInThisContext() as (
  exports: unknown,
  require: NodeJS.Require,
  module: unknown,
  filename: string,
  dirname: string,
) => void
run.call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle))
