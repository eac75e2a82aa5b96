// What the console's sections share: a value loaded from the operator API (once, or again and again while
// watched), an action's state, and which rows of a table are open.
import { useCallback, useEffect, useRef, useState } from './vendor/hooks.mjs';

/** Loads with `load()` on mount and whenever `refresh()` is called; keeps the last error. */
export function useLoaded(load, dependencies) {
  const [value, setValue] = useState();
  const [error, setError] = useState();
  const refresh = useCallback(async () => {
    try {
      setValue(await load());
      setError(undefined);
    } catch (failure) {
      setError(failure);
    }
  }, dependencies);
  useEffect(() => {
    refresh();
  }, [refresh]);
  return [value, error, refresh];
}

/** Runs an action, reporting its failure in the section's banner, then refreshes. */
export function useAction(refresh) {
  const [error, setError] = useState();
  const [busy, setBusy] = useState(false);
  const run = async (action) => {
    setBusy(true);
    setError(undefined);
    try {
      const result = await action();
      await refresh?.();
      return result;
    } catch (failure) {
      setError(failure);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
}

/**
 * A list read with `read()` whenever `key` changes, and every `everyMs` while `watching` and the tab is visible
 * (the failure of a read keeps the list: the caller shows the error beside it); answers the list, the
 * last error and `load` (read it again now). One request at a time: a load asked for while one is under way (an
 * action's, a new key's) is not dropped, since that one's answer may predate the change: it is discarded and the
 * list read again, by the `read` of the latest render. Dropped, a retried delivery stayed "failed" (for ever with
 * Watch off).
 */
export function useWatchedList(read, key, watching, everyMs) {
  const [list, setList] = useState();
  const [error, setError] = useState();
  const latest = useRef(read);
  latest.current = read;
  const loading = useRef(false);
  const again = useRef(false);
  const load = useCallback(async () => {
    if (loading.current) {
      again.current = true;
      return;
    }
    loading.current = true;
    try {
      do {
        again.current = false;
        const found = await latest.current();
        if (!again.current) {
          setList(found);
          setError(undefined);
        }
      } while (again.current);
    } catch (failure) {
      setError(failure);
    } finally {
      loading.current = false;
    }
  }, []);
  // Nothing is read while the tab is hidden (no one looks), and the list is read at once when it shows again.
  useEffect(() => {
    load();
    if (!watching) return undefined;
    const tick = () => {
      if (!document.hidden) load();
    };
    const timer = setInterval(tick, everyMs);
    addEventListener('visibilitychange', tick);
    return () => {
      clearInterval(timer);
      removeEventListener('visibilitychange', tick);
    };
  }, [key, watching]);
  return [list, error, load];
}

/** Which rows of a table are open (by id), and the toggle of one. */
export function useOpenRows(initial = []) {
  const [open, setOpen] = useState(() => new Set(initial));
  const toggle = (id) => {
    const next = new Set(open);
    next.has(id) ? next.delete(id) : next.add(id);
    setOpen(next);
  };
  return [open, toggle];
}
