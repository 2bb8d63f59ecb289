import type { ColumnSpec } from '../engine/data-plane.js'
import { InvalidArgumentError } from '../errors/index.js'
import { columnMappingId, fieldByName, physicalName } from '../protocol/schema.js'
import { columnMappingModeProperty } from '../protocol/table-properties.js'
import type { Snapshot } from '../snapshot/snapshot.js'

/**
 * The data-plane column specs of a snapshot's columns (all, or the named ones in that order).
 *
 * @throws {InvalidArgumentError} when a named column does not exist
 */
export function columnSpecs(snap: Snapshot, names: readonly string[] | undefined): ColumnSpec[] {
  const schema = snap.schema
  const mode = columnMappingModeProperty(snap.properties)
  const partition = new Set(snap.partitionColumns.map((c) => c.toLowerCase()))
  const fields =
    names === undefined
      ? schema.fields
      : names.map((n) => {
          const f = fieldByName(schema, n)
          if (!f) {
            throw new InvalidArgumentError(`Unknown column '${n}'`, {
              argument: 'columns',
              hint: `The table has: ${schema.fields.map((x) => x.name).join(', ')}`,
            })
          }
          return f
        })
  return fields.map((f) =>
    Object.freeze({
      name: f.name,
      type: f.type,
      physicalName: physicalName(f, mode),
      // Files are resolved by field id in mode `id` only; name mode goes by physical name.
      fieldId: mode === 'id' ? columnMappingId(f) : undefined,
      isPartition: partition.has(f.name.toLowerCase()),
    }),
  )
}
