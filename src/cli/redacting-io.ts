import { redactLocation } from '../index.js'
import type { CliIo } from './terminal.js'

/**
 * The command's streams with the secrets of its table locations removed from every text written
 * (results, `--json` documents, errors, progress): an `https://...?<SAS token>` location, or a URL
 * with a password, is printed as {@link redactLocation} shows it. Commands echo the location they
 * were given in many places; filtering here keeps each of them, and any added later, from
 * printing the token.
 *
 * @param io - the streams and environment
 * @param positionals - the command's positional arguments (the table location first)
 * @returns `io` itself when no argument carries a secret, else `io` with filtered stdout and stderr
 */
export function redactingIo(io: CliIo, positionals: readonly string[]): CliIo {
  const pairs: [string, string][] = []
  for (const arg of positionals) {
    const shown = redactLocation(arg)
    if (shown === arg) continue
    pairs.push([arg, shown])
    // The query alone (`sv=...&sig=...`), as a message may quote it.
    const q = arg.indexOf('?')
    if (q >= 0 && arg.length - q > 4) pairs.push([arg.slice(q + 1), '***'])
  }
  if (pairs.length === 0) return io
  const clean = (text: string): string => {
    let out = text
    for (const [secret, shown] of pairs) out = out.split(secret).join(shown)
    return out
  }
  return { ...io, stdout: filtered(io.stdout, clean), stderr: filtered(io.stderr, clean) }
}

function filtered<S extends CliIo['stdout']>(stream: S, clean: (text: string) => string): S {
  return new Proxy(stream, {
    get(target, prop) {
      if (prop === 'write') {
        // write(chunk, encoding?, callback?): only the chunk changes.
        return function write(this: unknown, chunk: unknown, ...rest: unknown[]): boolean {
          return Reflect.apply(target.write, target, [
            typeof chunk === 'string' ? clean(chunk) : chunk,
            ...rest,
          ])
        }
      }
      const value: unknown = Reflect.get(target, prop, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
