export * from "./accounts";
export * from "./notes";
export * from "./tokens";
export * from "./requests";
export * from "./jobs";
export * from "./exports";
export * from "./oauth";
export * from "./billing";
