import { ValidationFailed, type AppError } from "../http/errors";

/** What a person reads when a service refuses an action: a validation's own messages, else the error's. */
export function refusalMessage(e: AppError): string {
  if (e instanceof ValidationFailed) return (e.details as { message: string }[]).map((d) => d.message).join(" ");
  return e.message;
}
