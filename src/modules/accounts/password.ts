export const PASSWORD_SPECIALS = '!@#$%^&*()<>?"{}[]';

/** Section 2: 8 to 128 characters with an upper- and lower-case letter, a digit and a special. */
export function passwordProblem(password: string): string | null {
  if (password.length < 8 || password.length > 128) return "password must be 8 to 128 characters";
  if (!/[A-Z]/.test(password)) return "password needs an uppercase letter";
  if (!/[a-z]/.test(password)) return "password needs a lowercase letter";
  if (!/[0-9]/.test(password)) return "password needs a digit";
  if (![...password].some((c) => PASSWORD_SPECIALS.includes(c))) return `password needs one of ${PASSWORD_SPECIALS}`;
  return null;
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

let dummyHash: Promise<string> | null = null;

/**
 * A hash of no one's password, made once, on first use, with the same cost as a real one: checked
 * when an address has no account (or no password), so the answer takes as long as for a real one.
 */
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(crypto.randomUUID());
  return dummyHash;
}
