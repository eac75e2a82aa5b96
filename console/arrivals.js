// Which messages of the inbox arrived while the page was open, marked "new" until the operator leaves it. In the
// page's memory only: what the operator's team has dealt with is the shared "handled" state of the operator API
// (the same for every person and browser); this only points at what came in under the operator's eyes.
//
// By id, not by place: a message's place in arrival order is given before its create commits, so one committed
// just after a later one was listed sorts below it. It is new all the same, being an id not listed before.

/**
 * The state once a listing (`ids`, of the filter `key`) is on the screen: `listed`, every id listed since the
 * page or the filter was chosen; `arrived`, those that were not in its first listing. The first listing of a filter
 * is the start: nothing of it is new (choosing "All" does not make every handled message new). Answers `state`
 * itself when nothing changes.
 */
export function arrivals(state, key, ids) {
  if (!state || state.key !== key) return { key, listed: new Set(ids), arrived: new Set() };
  const fresh = ids.filter((id) => !state.listed.has(id));
  if (fresh.length === 0) return state;
  return { key, listed: new Set([...state.listed, ...fresh]), arrived: new Set([...state.arrived, ...fresh]) };
}
