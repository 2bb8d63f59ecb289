/**
 * Network namespaces standing in for separate hosts: each namespace gets one end of a veth pair
 * with an address in a private 10.200.x.0/30 link made here, the host keeps the other end, and a
 * route sends the namespace's traffic for the server address over its link. Nothing else is
 * reachable from inside (not even the host's loopback), and no traffic leaves this machine.
 *
 * Needs root and `ip netns`; {@link createHostLinks} reports why when they are not available.
 * Everything created is removed by `teardown`, also when the setup fails half-way.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** The namespaces and links of one test. */
export interface HostLinks {
  /** The address the server binds to (the host end of the first link). */
  readonly serverAddress: string
  /** One namespace per simulated host. */
  readonly namespaces: readonly string[]
  /** Removes every namespace and link created; idempotent. */
  teardown(): Promise<void>
}

/**
 * Creates `count` namespaces linked to the host. Link `i` (0-based) is `10.200.<base+i>.0/30`: the
 * host end is `.1`, the namespace end `.2`.
 *
 * @param count - namespaces to create
 * @returns the links, or the one-line reason why they cannot be made here
 */
export async function createHostLinks(count: number): Promise<HostLinks | { readonly skip: string }> {
  if (process.platform !== 'linux') return { skip: 'network namespaces need Linux' }
  if (process.getuid?.() !== 0) return { skip: 'network namespaces need root' }
  // A per-process subnet block keeps parallel test processes apart.
  const base = 16 + ((process.pid * 7) % 200)
  if (base + count > 250) return { skip: 'no free 10.200.x.0/30 block' }
  const tag = `${process.pid.toString(36)}${Math.random().toString(36).slice(2, 5)}`
  const namespaces: string[] = []
  const hostEnds: string[] = []
  const teardown = async () => {
    for (const dev of hostEnds.splice(0)) await ip(['link', 'del', dev]).catch(() => {})
    for (const ns of namespaces.splice(0)) await ip(['netns', 'del', ns]).catch(() => {})
  }
  try {
    await ip(['netns', 'add', `rlc${tag}0`])
  } catch (err) {
    return { skip: `ip netns add failed: ${firstLine(err)}` }
  }
  namespaces.push(`rlc${tag}0`)
  const serverAddress = `10.200.${base}.1`
  try {
    for (let i = 0; i < count; i++) {
      const ns = `rlc${tag}${i}`
      if (i > 0) {
        await ip(['netns', 'add', ns])
        namespaces.push(ns)
      }
      const host = `vh${tag}${i}`
      const peer = `vn${tag}${i}`
      await ip(['link', 'add', host, 'type', 'veth', 'peer', 'name', peer])
      hostEnds.push(host)
      await ip(['link', 'set', peer, 'netns', ns])
      await ip(['addr', 'add', `10.200.${base + i}.1/30`, 'dev', host])
      await ip(['link', 'set', host, 'up'])
      await ip(['netns', 'exec', ns, 'ip', 'addr', 'add', `10.200.${base + i}.2/30`, 'dev', peer])
      await ip(['netns', 'exec', ns, 'ip', 'link', 'set', peer, 'up'])
      await ip(['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up'])
      if (i > 0) {
        // The server listens on the first link's host end; the host delivers it locally.
        await ip([
          'netns',
          'exec',
          ns,
          'ip',
          'route',
          'add',
          `${serverAddress}/32`,
          'via',
          `10.200.${base + i}.1`,
        ])
      }
    }
  } catch (err) {
    await teardown()
    return { skip: `could not link the namespaces: ${firstLine(err)}` }
  }
  return { serverAddress, namespaces, teardown }
}

async function ip(args: readonly string[]): Promise<void> {
  await run('ip', [...args], { timeout: 10_000 })
}

function firstLine(err: unknown): string {
  const e = err as { stderr?: string; message?: string }
  return (e.stderr || e.message || String(err)).trim().split('\n')[0] ?? ''
}
