// The "$KEY.a.b" references of a client spec's arguments, shared by tests/interop/client.mjs and
// tests/http/npm/client.mjs: each is replaced by that field of what an earlier step saved under KEY.
// Plain JavaScript with no imports, so either folder's client can load it by a relative path.
export function resolver(saved) {
  return function resolve(value) {
    if (typeof value === "string" && value.startsWith("$")) {
      const [key, ...path] = value.slice(1).split(".");
      let found = saved[key];
      for (const part of path) found = found?.[part];
      if (found === undefined) throw new Error(`unresolved reference ${value}`);
      return found;
    }
    if (Array.isArray(value)) return value.map(resolve);
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, resolve(inner)]));
    }
    return value;
  };
}
