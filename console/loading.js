// What the console's sections share: a value loaded from the operator API, and an action's state.
import { useCallback, useEffect, useState } from './vendor/hooks.mjs';

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
