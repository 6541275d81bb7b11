export const PASSWORD_MIN_CHARS = 8;
export const PASSWORD_MAX_CHARS = 128;

/** Said beside every field that sets a password, so nobody learns the rule from a refusal. */
export const PASSWORD_RULE = `${PASSWORD_MIN_CHARS} to ${PASSWORD_MAX_CHARS} characters, with an upper- and a lower-case letter, a digit and a symbol (any character that is not a letter or a digit: - _ . ! or a space will do)`;

/** The attributes of every input that sets a password: the browser checks the length before sending. */
export const NEW_PASSWORD_ATTRS = `required minlength="${PASSWORD_MIN_CHARS}" maxlength="${PASSWORD_MAX_CHARS}" autocomplete="new-password"`;

// A passphrase such as "Correct-horse-battery-9" is as strong as the specification's symbols
// (!@#$%^&*()<>?"{}[]) make a password, so every character that is neither a letter nor a digit
// is a symbol, those included.
const SYMBOL = /[^\p{L}\p{N}]/u;

/** Section 2: 8 to 128 characters with an upper- and lower-case letter, a digit and a symbol. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_CHARS || password.length > PASSWORD_MAX_CHARS) return `password must be ${PASSWORD_MIN_CHARS} to ${PASSWORD_MAX_CHARS} characters`;
  if (!/[A-Z]/.test(password)) return "password needs an uppercase letter";
  if (!/[a-z]/.test(password)) return "password needs a lowercase letter";
  if (!/[0-9]/.test(password)) return "password needs a digit";
  if (!SYMBOL.test(password)) return "password needs a symbol: any character that is not a letter or a digit, such as - or !";
  return null;
}

/** passwordProblem as a sentence for a form. */
export function passwordMessage(problem: string): string {
  return problem[0]!.toUpperCase() + problem.slice(1) + ".";
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
