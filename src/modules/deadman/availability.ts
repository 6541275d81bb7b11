import { PLAN_NAMES, tierFor, type LimitProfileName } from "../../limits/plans";

/** A tier's name as the specification writes it: "dev_pro" is Dev-pro. */
const displayName = (tier: string) => tier.charAt(0).toUpperCase() + tier.slice(1).replace(/_/g, "-");

/**
 * The plans of this limit profile that have the dead-man's switch, as a person reads them ("Dev
 * and Team"; "Dev-pro" in the alternate profile), from the tier data rather than written out, so
 * the pages say what the checks do.
 */
export function plansWithDeadman(profile: LimitProfileName): string {
  const names = [...new Set(PLAN_NAMES.map((p) => tierFor(profile, p)).filter((t) => t.deadman).map((t) => displayName(t.name)))];
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}
