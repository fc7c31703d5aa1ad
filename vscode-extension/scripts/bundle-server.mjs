// Builds bundled/libs: the nexa-lsp wheel of this checkout and its dependencies, installed
// with `pip install --target` from wheels only, every one of them pure Python (checked), so
// one .vsix runs on any platform with any Python >= 3.11.
//
//   node scripts/bundle-server.mjs            # skips when the sources did not change
//   NEXA_BUNDLE_PYTHON=python3.11 NEXA_BUNDLE_WHEEL=dist/nexa_lsp-0.1.0-py3-none-any.whl ...
//
// NEXA_BUNDLE_PYTHON: the Python running pip (default python3; 3.11+, the oldest supported,
// so that environment markers pick what 3.11 needs). NEXA_BUNDLE_WHEEL: a wheel already built
// (CI builds one); otherwise `pip wheel` builds it from the project root.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const EXTENSION = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PROJECT = resolve(EXTENSION, "..");
const LIBS = join(EXTENSION, "bundled", "libs");
const STAMP = join(LIBS, ".bundle-stamp");
const python = process.env.NEXA_BUNDLE_PYTHON || "python3";
const givenWheel = process.env.NEXA_BUNDLE_WHEEL || "";

function walk(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "__pycache__") walk(path, out);
    } else out.push(path);
  }
  return out;
}

/** Hash of what the wheel is built from (or of the given wheel). */
function sourceStamp() {
  const hash = createHash("sha256");
  const files = givenWheel !== ""
    ? [resolve(givenWheel)]
    : [join(PROJECT, "pyproject.toml"), ...walk(join(PROJECT, "nexa_lsp")), ...walk(join(PROJECT, "grammar"))].sort();
  for (const file of files) hash.update(relative(PROJECT, file)).update("\0").update(readFileSync(file));
  return hash.digest("hex");
}

function pip(args) {
  execFileSync(python, ["-m", "pip", "--disable-pip-version-check", ...args], { stdio: ["ignore", "inherit", "inherit"] });
}

function sizeOf(dir) {
  return walk(dir).reduce((n, f) => n + statSync(f).size, 0);
}

const version = execFileSync(python, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8" }).trim();
const [major, minor] = version.split(".").map(Number);
if (major < 3 || (major === 3 && minor < 11)) throw new Error(`${python} is Python ${version}; the bundle needs 3.11+`);

const stamp = sourceStamp();
if (existsSync(STAMP) && readFileSync(STAMP, "utf8") === stamp) {
  console.log(`bundled/libs is up to date (${(sizeOf(LIBS) / 1024 / 1024).toFixed(2)} MiB)`);
  process.exit(0);
}

rmSync(LIBS, { recursive: true, force: true });
let wheel = givenWheel !== "" ? resolve(givenWheel) : "";
const work = mkdtempSync(join(tmpdir(), "nexa-bundle-"));
try {
  if (wheel === "") {
    pip(["wheel", "--quiet", "--no-deps", "--wheel-dir", work, PROJECT]);
    wheel = join(work, readdirSync(work).find((f) => f.endsWith(".whl")));
  }
  pip(["install", "--quiet", "--target", LIBS, "--only-binary", ":all:", "--no-compile", "--no-warn-script-location", wheel]);
} finally {
  rmSync(work, { recursive: true, force: true });
}
// Console scripts are for an installed environment, not for the bundle; byte code is
// written by the user's Python for its own version.
rmSync(join(LIBS, "bin"), { recursive: true, force: true });
const caches = [];
const findCaches = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    if (entry.name === "__pycache__") caches.push(join(dir, entry.name));
    else findCaches(join(dir, entry.name));
  }
};
findCaches(LIBS);
for (const dir of caches) rmSync(dir, { recursive: true, force: true });

// Every distribution must be a pure-Python wheel: the bundle is the same on every platform.
const impure = [];
for (const entry of readdirSync(LIBS).filter((e) => e.endsWith(".dist-info"))) {
  const wheelInfo = readFileSync(join(LIBS, entry, "WHEEL"), "utf8");
  const tags = [...wheelInfo.matchAll(/^Tag: (.+)$/gm)].map((m) => m[1].trim());
  if (!/^Root-Is-Purelib: true$/m.test(wheelInfo) || !tags.every((t) => t.endsWith("-none-any"))) impure.push(`${entry} (${tags.join(", ")})`);
}
const binaries = walk(LIBS).filter((f) => /\.(so|pyd|dylib|dll)$/.test(f));
if (impure.length > 0 || binaries.length > 0) {
  rmSync(LIBS, { recursive: true, force: true });
  throw new Error(`not pure Python: ${[...impure, ...binaries.map((f) => relative(LIBS, f))].join(", ")}`);
}

writeFileSync(STAMP, stamp);
const dists = readdirSync(LIBS).filter((e) => e.endsWith(".dist-info")).map((e) => e.replace(/\.dist-info$/, "")).sort();
console.log(`bundled/libs: ${dists.length} pure-Python distributions, ${(sizeOf(LIBS) / 1024 / 1024).toFixed(2)} MiB: ${dists.join(", ")}`);
