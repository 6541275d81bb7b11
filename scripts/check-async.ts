/**
 * Two mistakes the type checker lets through, now that database calls are async:
 *  - a promise left floating (a statement that calls an async function without `await`,
 *    `return` or `void`): its write or its error would escape the request or the transaction;
 *  - an `await` of something that is never a promise (a leftover of a function that was async once).
 * Run by `make check` (and by CI through it). Prints file:line for each and exits 1.
 */
import ts from "typescript";

const configPath = ts.findConfigFile(process.cwd(), ts.sys.fileExists, "tsconfig.json")!;
const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, process.cwd());
const program = ts.createProgram(parsed.fileNames, parsed.options);
const checker = program.getTypeChecker();
const problems: string[] = [];

/** Could be a promise: `any` and `unknown` could, so an await of them is not reported. */
function mayBeThenable(type: ts.Type): boolean {
  if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return true;
  if (type.isUnion()) return type.types.some(mayBeThenable);
  return type.getProperty("then") !== undefined;
}

/** Is a promise for sure (has a `then`). */
function isThenable(type: ts.Type): boolean {
  if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return false;
  if (type.isUnion()) return type.types.some(isThenable);
  return type.getProperty("then") !== undefined;
}

/** `p.catch(f)`, `p.then(f, g)` and `p.finally(f)` handle what they are called on. */
function handled(call: ts.CallExpression | ts.NewExpression): boolean {
  if (!ts.isCallExpression(call) || !ts.isPropertyAccessExpression(call.expression)) return false;
  const name = call.expression.name.text;
  return name === "catch" || (name === "then" && call.arguments.length === 2);
}

function where(node: ts.Node): string {
  const sf = node.getSourceFile();
  const { line } = sf.getLineAndCharacterOfPosition(node.getStart());
  return `${sf.fileName.replace(process.cwd() + "/", "")}:${line + 1}`;
}

function visit(node: ts.Node): void {
  if (ts.isExpressionStatement(node)) {
    const e = node.expression;
    const call = ts.isCallExpression(e) || ts.isNewExpression(e) ? e : null;
    if (call && !handled(call) && isThenable(checker.getTypeAtLocation(e))) {
      problems.push(`${where(node)}: a promise is left floating (await it, return it, or mark it \`void\`): ${e.getText().slice(0, 80)}`);
    }
  }
  if (ts.isAwaitExpression(node) && !mayBeThenable(checker.getTypeAtLocation(node.expression))) {
    problems.push(`${where(node)}: await of a value that is never a promise: ${node.expression.getText().slice(0, 80)}`);
  }
  ts.forEachChild(node, visit);
}

for (const sf of program.getSourceFiles()) {
  // The service's own code: a test's unawaited server.stop() is its own business.
  if (sf.isDeclarationFile || !sf.fileName.startsWith(process.cwd() + "/src/")) continue;
  if (process.argv.length > 2 && !process.argv.slice(2).some((p) => sf.fileName.includes(p))) continue;
  visit(sf);
}
for (const p of problems) console.log(p);
if (problems.length > 0) {
  console.log(`${problems.length} async mistakes`);
  process.exit(1);
}
