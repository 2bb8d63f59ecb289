import { type Command, integerOption } from '../command.js'
import { renderTable } from '../render.js'

/** `delta-rlc history`: the commits of a table, newest first. */
export const historyCommand: Command = {
  name: 'history',
  summary: 'List the commits of the table, newest first: operation, parameters, metrics.',
  usage: '<table> [--limit N]',
  options: { limit: { type: 'string', value: 'N', help: 'show at most N commits' } },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const limit = integerOption(values, 'limit', 'history')
    const table = await ctx.openTable(loc, {})
    try {
      const entries = await table.history(limit === undefined ? {} : { limit })
      if (ctx.json) {
        ctx.printJson({
          table: loc,
          history: entries.map((e) => ({
            version: e.version,
            timestamp: new Date(e.timestamp).toISOString(),
            operation: e.operation ?? null,
            commitInfo: e.commitInfo ?? null,
          })),
        })
        return
      }
      const rows = entries.map((e) => {
        const info = (e.commitInfo ?? {}) as Record<string, unknown>
        return {
          version: e.version,
          timestamp: new Date(e.timestamp)
            .toISOString()
            .replace('T', ' ')
            .replace(/\.\d+Z$/, 'Z'),
          operation: e.operation ?? '?',
          parameters: compact(info.operationParameters),
          metrics: compact(info.operationMetrics),
          engine: typeof info.engineInfo === 'string' ? info.engineInfo : '',
        }
      })
      ctx.print(
        renderTable(['version', 'timestamp', 'operation', 'parameters', 'metrics', 'engine'], rows, ctx.out),
      )
    } finally {
      await table.close()
    }
  },
}

/** `k=v k=v` of a string map, for one table cell. */
function compact(map: unknown): string {
  if (map === null || typeof map !== 'object') return ''
  return Object.entries(map as Record<string, unknown>)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : String(v)}`)
    .join(' ')
}
