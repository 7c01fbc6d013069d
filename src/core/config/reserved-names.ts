// Names that would misbehave as keys of a plain object (`obj[name] = v` sets the prototype for
// `__proto__`, and `obj[name]` finds an inherited function for `toString`): refused as ids and names.
const RESERVED: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

export function isReservedName(name: string): boolean {
  return RESERVED.has(name);
}

export function reservedNameMessage(name: string): string {
  return `"${name}" is reserved (it names a built-in property of JavaScript objects); choose another name`;
}
