/**
 * How a PATCH becomes an UPDATE, the same for every resource: the supplied members (those not undefined)
 * as their columns, and of those only the columns whose value differs from the stored one, so that a
 * patch which changes nothing writes nothing and keeps the version.
 */

/** API member → column, for the members a resource stores as given. */
export type ColumnsOf<Body, Row> = { readonly [Member in keyof Body]?: keyof Row };

/** The supplied members of `body` that `columns` names, keyed by their columns. */
export function suppliedColumns<Body extends object, Row>(columns: ColumnsOf<Body, Row>, body: Body): Partial<Row> {
  const values: Record<string, unknown> = {};
  for (const [member, column] of Object.entries(columns) as [keyof Body, keyof Row & string][]) {
    if (body[member] !== undefined) values[column] = body[member];
  }
  return values as Partial<Row>;
}

/** The columns of `values` whose value differs from the stored row's (`!==`: a JSON value always differs). */
export function changedColumns<Row extends object>(row: Row, values: Partial<Row>): Partial<Row> {
  const changes: Partial<Row> = {};
  for (const [column, value] of Object.entries(values) as [keyof Row, Row[keyof Row]][]) {
    if (value !== undefined && value !== row[column]) changes[column] = value;
  }
  return changes;
}
