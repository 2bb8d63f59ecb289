"""A long-lived peer process for the live interoperability tier: Spark with Delta, and delta-rs.

Protocol: one JSON object a line on stdin, `{"id": 1, "cmd": "spark.sql", ...arguments}`, answered
by one JSON line on stdout, `{"id": 1, "ok": true, "result": ...}` or
`{"id": 1, "ok": false, "error": {"type": "...", "message": "..."}}`. Commands run one at a time,
in order. Stdout carries only the protocol: everything else the process or the JVM prints goes to
stderr.

Spark starts on the first `spark.*` command, so a file that only drives delta-rs pays no JVM.

Values leave in the typed encoding (`format: "typed"`, the default), which the TypeScript side
reproduces from delta-rlc's rows (test/helpers/peers.ts): a scalar is `"<type>:<value>"` with the
Delta type name (`long:5`, `decimal(38,18):1.500000000000000000`, `timestamp:<epoch micros>`,
`timestamp_ntz:<epoch micros>`, `date:2024-01-31`, `binary:<base64>`, `double:<IEEE bits in hex>`),
a struct is an object, an array a list and a map `{"$map": [[key, value], ...]}` sorted by key, so
two engines agree on a value only when both its type and its value agree. `format: "plain"` gives
JSON-friendly values instead (history, detail).
"""

import base64
import datetime
import decimal
import glob
import json
import os
import struct
import sys
import traceback

# The protocol owns the real stdout; fd 1 (which the JVM inherits) points at stderr.
_protocol = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr

import pyarrow as pa  # noqa: E402

PEERS = os.environ.get("DELTA_RLC_PEERS") or os.path.join(os.path.dirname(__file__), "..", "..", ".peers")
EPOCH = datetime.datetime(1970, 1, 1)
EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

_spark = None


def spark():
    """The warm SparkSession of this process, started on first use."""
    global _spark
    if _spark is None:
        from pyspark.sql import SparkSession

        # The driver binds the loopback interface only.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

        jars = sorted(glob.glob(os.path.join(PEERS, "jars", "*.jar")))
        scratch = os.environ.get("DELTA_RLC_PEER_SCRATCH") or os.path.join(PEERS, "scratch")
        os.makedirs(scratch, exist_ok=True)
        builder = (
            SparkSession.builder.master("local[2]")
            .appName("delta-rlc-peer")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.default.parallelism", "2")
            .config("spark.databricks.delta.snapshotPartitions", "2")
            .config("spark.driver.memory", "2g")
            .config("spark.jars", ",".join(jars))
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .config("spark.delta.logStore.file.impl", os.environ.get("DELTA_RLC_PEER_LOGSTORE", "AtomicLinkLogStore"))
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.catalogImplementation", "in-memory")
            .config("spark.sql.warehouse.dir", os.path.join(scratch, "warehouse"))
            # Retention checks guard production tables; the tests vacuum and clean logs on purpose.
            .config("spark.databricks.delta.retentionDurationCheck.enabled", "false")
        )
        for key, value in json.loads(os.environ.get("DELTA_RLC_PEER_SPARK_CONF", "{}")).items():
            builder = builder.config(key, value)
        _spark = builder.getOrCreate()
        _spark.sparkContext.setLogLevel("ERROR")
    return _spark


# ---------------------------------------------------------------------------------------------
# Encoding values


def _float_bits(value):
    if value != value:
        return "NaN"
    return struct.pack(">d", value).hex()


def _micros(value, aware):
    if aware:
        delta = value - EPOCH_UTC
    else:
        delta = value - EPOCH
    return delta // datetime.timedelta(microseconds=1)


def encode_value(value, t):
    """One value of Arrow type `t` in the typed encoding."""
    if value is None:
        return None
    if pa.types.is_struct(t):
        return {t.field(i).name: encode_value(value.get(t.field(i).name), t.field(i).type) for i in range(t.num_fields)}
    if pa.types.is_map(t):
        pairs = [[encode_value(k, t.key_type), encode_value(v, t.item_type)] for k, v in value]
        pairs.sort(key=lambda p: json.dumps(p[0], sort_keys=True))
        return {"$map": pairs}
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        return [encode_value(v, t.value_type) for v in value]
    if pa.types.is_dictionary(t):
        return encode_value(value, t.value_type)
    if pa.types.is_boolean(t):
        return "boolean:" + ("true" if value else "false")
    if pa.types.is_int8(t):
        return f"byte:{value}"
    if pa.types.is_int16(t):
        return f"short:{value}"
    if pa.types.is_int32(t):
        return f"integer:{value}"
    if pa.types.is_int64(t):
        return f"long:{value}"
    if pa.types.is_unsigned_integer(t):
        # Not a Delta type; delta-rs uses uint64 for some metadata columns (CDF's _commit_version).
        return f"uint{t.bit_width}:{value}"
    if pa.types.is_float32(t):
        return "float:" + _float_bits(value)
    if pa.types.is_float64(t):
        return "double:" + _float_bits(value)
    if pa.types.is_decimal(t):
        with decimal.localcontext(decimal.Context(prec=80)):
            exact = value.quantize(decimal.Decimal(1).scaleb(-t.scale))
        return f"decimal({t.precision},{t.scale}):" + format(exact, "f")
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string:" + value
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t) or pa.types.is_fixed_size_binary(t):
        return "binary:" + base64.b64encode(value).decode("ascii")
    if pa.types.is_date(t):
        return "date:" + value.isoformat()
    if pa.types.is_timestamp(t):
        if t.tz is not None:
            return f"timestamp:{_micros(value, True)}"
        return f"timestamp_ntz:{_micros(value, False)}"
    if pa.types.is_null(t):
        return None
    raise TypeError(f"no typed encoding for Arrow type {t}")


def plain_value(value):
    """A JSON-friendly form of a Python value from Arrow (history, detail, metrics)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if all(isinstance(p, tuple) and len(p) == 2 for p in value) and len(value) > 0:
            return {str(k): plain_value(v) for k, v in value}
        return [plain_value(v) for v in value]
    return str(value)


def _normalize_timestamps(table):
    """Casts timestamp columns of any unit to microseconds (Delta's unit), refusing a lossy cast."""
    columns = []
    changed = False
    for i, field in enumerate(table.schema):
        column = table.column(i)
        if pa.types.is_timestamp(field.type) and field.type.unit != "us":
            column = column.cast(pa.timestamp("us", tz=field.type.tz), safe=True)
            changed = True
        columns.append(column)
    return pa.table(columns, names=table.column_names) if changed else table


def encode_table(table, fmt="typed"):
    table = _normalize_timestamps(table)
    rows = table.to_pylist()
    if fmt == "plain":
        return [{k: plain_value(v) for k, v in row.items()} for row in rows]
    types = {f.name: f.type for f in table.schema}
    return [{k: encode_value(v, types[k]) for k, v in row.items()} for row in rows]


def arrow_of(reader):
    """A pyarrow Table from whatever Arrow-capable object delta-rs or Spark returned."""
    if isinstance(reader, pa.Table):
        return reader
    if hasattr(reader, "read_all"):
        reader = reader.read_all()
    return pa.table(reader)


# ---------------------------------------------------------------------------------------------
# Spark commands


def spark_table(path, version=None, timestamp=None):
    reader = spark().read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    if timestamp is not None:
        reader = reader.option("timestampAsOf", timestamp)
    return reader.load(path)


def cmd_spark_sql(args):
    """Runs one Spark SQL statement; the result rows come back encoded."""
    df = spark().sql(args["sql"])
    try:
        data = df.toArrow()
    except pa.ArrowInvalid:
        # Some commands' metric rows (OPTIMIZE, REORG) put nulls in fields their schema declares
        # NOT NULL, which Arrow refuses; their rows come back plain instead.
        return {"rows": [plain_value(row.asDict(recursive=True)) for row in df.collect()]}
    return {"rows": encode_table(data, args.get("format", "typed"))}


def cmd_spark_read(args):
    df = spark_table(args["path"], args.get("version"), args.get("timestamp"))
    if args.get("where"):
        df = df.where(args["where"])
    if args.get("columns"):
        df = df.select(*args["columns"])
    return {"rows": encode_table(df.toArrow(), args.get("format", "typed")), "schema": json.loads(df.schema.json())}


def cmd_spark_history(args):
    df = spark().sql(f"DESCRIBE HISTORY delta.`{args['path']}`")
    return {"rows": encode_table(df.toArrow(), "plain")}


def cmd_spark_detail(args):
    df = spark().sql(f"DESCRIBE DETAIL delta.`{args['path']}`")
    return {"rows": encode_table(df.toArrow(), "plain")}


def cmd_spark_cdf(args):
    reader = spark().read.format("delta").option("readChangeFeed", "true").option("startingVersion", args["start"])
    if args.get("end") is not None:
        reader = reader.option("endingVersion", args["end"])
    df = reader.load(args["path"])
    return {"rows": encode_table(df.toArrow(), args.get("format", "typed"))}


def cmd_spark_conf(args):
    for key, value in args["set"].items():
        spark().conf.set(key, value)
    return {}


# ---------------------------------------------------------------------------------------------
# delta-rs commands


def rs_table(path, version=None):
    from deltalake import DeltaTable

    table = DeltaTable(path)
    if version is not None:
        table.load_as_version(version)
    return table


def _rs_query(sql, tables):
    from deltalake import QueryBuilder

    qb = QueryBuilder()
    for name, table in tables.items():
        qb = qb.register(name, table)
    return arrow_of(qb.execute(sql))


def cmd_rs_read(args):
    """Reads through QueryBuilder, the path that handles DVs, column mapping and v2 checkpoints."""
    table = rs_table(args["path"], args.get("version"))
    columns = ", ".join(f'"{c}"' for c in args["columns"]) if args.get("columns") else "*"
    where = f" WHERE {args['where']}" if args.get("where") else ""
    data = _rs_query(f"SELECT {columns} FROM t{where}", {"t": table})
    return {"rows": encode_table(data, args.get("format", "typed")), "schema": json.loads(table.schema().to_json())}


def cmd_rs_read_pyarrow(args):
    """The `to_pyarrow_table` path, which refuses some reader features (asserted by the tests)."""
    table = rs_table(args["path"], args.get("version"))
    return {"rows": encode_table(table.to_pyarrow_table(), args.get("format", "typed"))}


def cmd_rs_query(args):
    """DataFusion SQL over delta-rs tables: `tables` maps a name to a path."""
    tables = {name: rs_table(path) for name, path in args.get("tables", {}).items()}
    return {"rows": encode_table(_rs_query(args["sql"], tables), args.get("format", "typed"))}


def cmd_rs_write(args):
    """write_deltalake of the rows a DataFusion query makes (`sql`), so that types are exact."""
    from deltalake import write_deltalake

    tables = {name: rs_table(path) for name, path in args.get("tables", {}).items()}
    data = _rs_query(args["sql"], tables)
    kwargs = {}
    for key in ("mode", "partition_by", "configuration", "schema_mode", "name", "description", "predicate"):
        if args.get(key) is not None:
            kwargs[key] = args[key]
    write_deltalake(args["path"], data, **kwargs)
    return {"version": rs_table(args["path"]).version()}


def cmd_rs_create(args):
    """DeltaTable.create with a schema given as Delta schema JSON."""
    from deltalake import DeltaTable, Schema

    schema = Schema.from_json(json.dumps(args["schema"]))
    DeltaTable.create(
        args["path"],
        schema,
        mode=args.get("mode", "error"),
        partition_by=args.get("partition_by"),
        configuration=args.get("configuration"),
    )
    return {"version": rs_table(args["path"]).version()}


def _metrics(value):
    return plain_value(value if isinstance(value, dict) else json.loads(json.dumps(value, default=str)))


def cmd_rs_delete(args):
    return {"metrics": _metrics(rs_table(args["path"]).delete(args.get("predicate")))}


def cmd_rs_update(args):
    table = rs_table(args["path"])
    return {"metrics": _metrics(table.update(updates=args["set"], predicate=args.get("predicate")))}


def cmd_rs_merge(args):
    """MERGE of a DataFusion query's rows into the table; each clause is [kind, {args}]."""
    table = rs_table(args["path"])
    source = _rs_query(args["source_sql"], {})
    merger = table.merge(source, predicate=args["on"], source_alias="source", target_alias="target")
    for kind, clause in args["clauses"]:
        merger = getattr(merger, kind)(**clause)
    return {"metrics": _metrics(merger.execute())}


def cmd_rs_optimize(args):
    table = rs_table(args["path"])
    if args.get("z_order"):
        return {"metrics": _metrics(table.optimize.z_order(args["z_order"]))}
    return {"metrics": _metrics(table.optimize.compact(target_size=args.get("target_size")))}


def cmd_rs_vacuum(args):
    table = rs_table(args["path"])
    removed = table.vacuum(retention_hours=args.get("retention_hours", 0), dry_run=args.get("dry_run", False), enforce_retention_duration=False)
    return {"files": sorted(removed)}


def cmd_rs_restore(args):
    return {"metrics": _metrics(rs_table(args["path"]).restore(args["version"]))}


def cmd_rs_checkpoint(args):
    rs_table(args["path"]).create_checkpoint()
    return {}


def cmd_rs_cleanup(args):
    rs_table(args["path"]).cleanup_metadata()
    return {}


def cmd_rs_history(args):
    return {"rows": plain_value(rs_table(args["path"]).history())}


def cmd_rs_detail(args):
    table = rs_table(args["path"], args.get("version"))
    meta = table.metadata()
    protocol = table.protocol()
    files = arrow_of(table.get_add_actions(flatten=True))
    return {
        "version": table.version(),
        "numFiles": files.num_rows,
        "sizeInBytes": sum(files.column("size_bytes").to_pylist()) if files.num_rows else 0,
        "partitionColumns": list(meta.partition_columns),
        "properties": dict(meta.configuration),
        "protocol": {
            "minReaderVersion": protocol.min_reader_version,
            "minWriterVersion": protocol.min_writer_version,
            "readerFeatures": protocol.reader_features,
            "writerFeatures": protocol.writer_features,
        },
        "schema": json.loads(table.schema().to_json()),
    }


def cmd_rs_cdf(args):
    table = rs_table(args["path"])
    data = arrow_of(table.load_cdf(starting_version=args["start"], ending_version=args.get("end")))
    return {"rows": encode_table(data, args.get("format", "typed"))}


def cmd_rs_alter(args):
    """table.alter.<method>(**kwargs): add_constraint, set_table_properties, add_feature, ..."""
    table = rs_table(args["path"])
    getattr(table.alter, args["method"])(**args.get("kwargs", {}))
    return {"version": rs_table(args["path"]).version()}


def cmd_ping(args):
    return {"pid": os.getpid(), "spark": _spark is not None}


def cmd_versions(args):
    from importlib.metadata import version

    return {name: version(name) for name in ["pyspark", "delta-spark", "deltalake", "pyarrow"]}


COMMANDS = {name[4:].replace("_", ".", 1).replace("_", "-"): fn for name, fn in globals().items() if name.startswith("cmd_")}


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        request = json.loads(line)
        rid = request.get("id")
        try:
            fn = COMMANDS.get(request.get("cmd"))
            if fn is None:
                raise KeyError(f"unknown command {request.get('cmd')!r}; known: {sorted(COMMANDS)}")
            response = {"id": rid, "ok": True, "result": fn(request)}
        except Exception as e:  # noqa: BLE001 - every failure goes back to the caller, typed
            traceback.print_exc(file=sys.stderr)
            message = str(e)
            if len(message) > 4000:
                message = message[:4000] + "..."
            response = {"id": rid, "ok": False, "error": {"type": type(e).__name__, "message": message}}
        _protocol.write(json.dumps(response) + "\n")
        _protocol.flush()
    if _spark is not None:
        _spark.stop()


if __name__ == "__main__":
    main()
