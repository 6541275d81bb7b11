// Font files imported `with { type: "file" }` are paths: on disk when run from source, inside
// the executable after `bun build --compile`.
declare module "*.ttf" {
  const path: string;
  export default path;
}

declare module "*.otf" {
  const path: string;
  export default path;
}
