/**
 * Decides which path a Nexa source is on from its leading trivia only, without
 * parsing it (spec: "a cheap scan of the leading trivia decides the path").
 *
 * The version declaration must be the first statement; only whitespace, `//`
 * and `/* *\/` comments and a `#!` first line may come before it. No
 * declaration, `nexa 2.4;`, or an unsupported/malformed declaration all leave
 * the file on the 2.4 compatibility path.
 */

export type NexaPath = "2.4" | "3.0";

export const SUPPORTED_VERSIONS: readonly string[] = ["2.4", "3.0"];

export interface VersionScan {
  /** The grammar that parses the file. */
  path: NexaPath;
  /** A `nexa ...` declaration was found as the first statement. */
  declared: boolean;
  /** The text after `nexa` (e.g. "3.0", "3.7", "three"), when declared. */
  version?: string;
  /** False for an unsupported (`nexa 3.7;`) or malformed (`nexa 3;`) declaration. */
  supported: boolean;
  /** Offset and length of the declaration in the text, when declared. */
  offset?: number;
  length?: number;
}

const WHITESPACE = /[ \t\r\n\f\v\u00a0\ufeff]/;

/** Index of the first character after the leading trivia. */
export function skipLeadingTrivia(text: string): number {
  let i = 0;
  const n = text.length;
  if (text.charCodeAt(0) === 0xfeff) i = 1;
  if (text.startsWith("#!", i)) {
    const eol = text.indexOf("\n", i);
    i = eol === -1 ? n : eol + 1;
  }
  for (;;) {
    while (i < n && WHITESPACE.test(text.charAt(i))) i++;
    if (text.startsWith("//", i)) {
      const eol = text.indexOf("\n", i);
      i = eol === -1 ? n : eol + 1;
    } else if (text.startsWith("/*", i)) {
      const close = text.indexOf("*/", i + 2);
      // An unterminated block comment swallows the rest of the file.
      i = close === -1 ? n : close + 2;
    } else {
      return i;
    }
  }
}

const DECLARATION = /^nexa(?![A-Za-z0-9_])\s*([0-9A-Za-z_.]*)[ \t]*(;?)/;
const VERSION_SHAPE = /^[0-9]+\.[0-9]+$/;

export function scanVersion(text: string): VersionScan {
  const start = skipLeadingTrivia(text);
  // Only a short window is needed: `nexa`, whitespace and the version.
  const head = text.slice(start, start + 256);
  const m = DECLARATION.exec(head);
  if (m === null) {
    return { path: "2.4", declared: false, supported: true };
  }
  const version = m[1] ?? "";
  const length = m[0].length;
  const wellFormed = VERSION_SHAPE.test(version);
  const supported = wellFormed && SUPPORTED_VERSIONS.includes(version);
  return {
    path: supported && version === "3.0" ? "3.0" : "2.4",
    declared: true,
    version,
    supported,
    offset: start,
    length,
  };
}

export interface VersionStatus {
  text: string;
  tooltip: string;
  /** Clicking offers the migration to Nexa 3.0. */
  offersMigration: boolean;
}

/** Status bar text and tooltip for a scan result. */
export function versionStatus(scan: VersionScan): VersionStatus {
  if (scan.path === "3.0") {
    return {
      text: "Nexa 3.0",
      tooltip: "This file declares `nexa 3.0;`: runs are values (execute / continue / resume).",
      offersMigration: false,
    };
  }
  let tooltip: string;
  if (!scan.declared) {
    tooltip =
      "No version declaration: this file is on the Nexa 2.4 compatibility path. Click to migrate it to Nexa 3.0.";
  } else if (scan.supported) {
    tooltip = "This file declares `nexa 2.4;` (compatibility path). Click to migrate it to Nexa 3.0.";
  } else {
    tooltip =
      `Unsupported version declaration \`nexa ${scan.version ?? ""}\` (supported: ${SUPPORTED_VERSIONS.join(", ")}); ` +
      "the file is read on the 2.4 compatibility path. Click to migrate it to Nexa 3.0.";
  }
  return { text: "Nexa 2.4 (compatibility)", tooltip, offersMigration: true };
}

/**
 * True when `prefix` (the start of a document) may be too short to decide:
 * the leading trivia runs up to (or close to) its end. Editors scan a few
 * lines first and read more only when this says so.
 */
export function scanNeedsMoreText(prefix: string): boolean {
  return skipLeadingTrivia(prefix) + 64 >= prefix.length;
}
