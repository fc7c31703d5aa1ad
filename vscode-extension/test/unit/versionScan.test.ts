import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { scanNeedsMoreText, scanVersion, skipLeadingTrivia, versionStatus } from "../../src/logic/versionScan";

describe("scanVersion", () => {
  it("no declaration is the 2.4 compatibility path", () => {
    const s = scanVersion("agent A { prompt: \"x\" }\n");
    assert.equal(s.path, "2.4");
    assert.equal(s.declared, false);
    assert.equal(s.supported, true);
  });

  it("an empty file is on the 2.4 path", () => {
    assert.equal(scanVersion("").path, "2.4");
    assert.equal(scanVersion("   \n\n").declared, false);
  });

  it("nexa 3.0; as the first statement selects 3.0", () => {
    const s = scanVersion("nexa 3.0;\nagent A {}\n");
    assert.deepEqual(s, { path: "3.0", declared: true, version: "3.0", supported: true, offset: 0, length: 9 });
  });

  it("the semicolon is optional", () => {
    assert.equal(scanVersion("nexa 3.0\nflow main {}").path, "3.0");
  });

  it("skips whitespace, line and block comments and a #! first line", () => {
    const text = "#!/usr/bin/env nexa\n\n// header\n/* block\n   nexa 2.4; */\n  // more\n\tnexa 3.0;\n";
    const s = scanVersion(text);
    assert.equal(s.path, "3.0");
    assert.equal(s.offset, text.indexOf("nexa 3.0"));
  });

  it("a byte order mark is skipped", () => {
    assert.equal(scanVersion("\ufeffnexa 3.0;").path, "3.0");
  });

  it("#! is only trivia on the first line", () => {
    const s = scanVersion("// c\n#!/bin/nexa\nnexa 3.0;");
    assert.equal(s.path, "2.4");
    assert.equal(s.declared, false);
  });

  it("a declaration after another statement does not count", () => {
    assert.equal(scanVersion("include \"a.nx\";\nnexa 3.0;\n").path, "2.4");
  });

  it("a declaration inside a comment does not count", () => {
    assert.equal(scanVersion("// nexa 3.0;\nagent A {}").path, "2.4");
    assert.equal(scanVersion("/* nexa 3.0; */ agent A {}").path, "2.4");
  });

  it("an unterminated block comment hides everything", () => {
    assert.equal(scanVersion("/* open\nnexa 3.0;").declared, false);
  });

  it("nexa 2.4; is the 2.4 path, declared", () => {
    const s = scanVersion("nexa 2.4;");
    assert.equal(s.path, "2.4");
    assert.equal(s.declared, true);
    assert.equal(s.supported, true);
  });

  it("unsupported and malformed versions fall back to 2.4 and are flagged", () => {
    for (const src of ["nexa 3.7;", "nexa 2.1;", "nexa three;", "nexa 3;", "nexa;"]) {
      const s = scanVersion(src);
      assert.equal(s.path, "2.4", src);
      assert.equal(s.declared, true, src);
      assert.equal(s.supported, false, src);
    }
  });

  it("an identifier that starts with nexa is not a declaration", () => {
    assert.equal(scanVersion("nexa_tool = 1").declared, false);
    assert.equal(scanVersion("nexa3.0;").declared, false);
  });

  it("the version may follow a newline", () => {
    assert.equal(scanVersion("nexa\n  3.0;").path, "3.0");
  });

  it("skipLeadingTrivia returns the first code offset", () => {
    assert.equal(skipLeadingTrivia("  // a\n/* b */ x"), 15);
    assert.equal(skipLeadingTrivia("// only a comment"), 17);
  });
});

describe("versionStatus", () => {
  it("labels the two paths", () => {
    assert.equal(versionStatus(scanVersion("nexa 3.0;")).text, "Nexa 3.0");
    assert.equal(versionStatus(scanVersion("nexa 3.0;")).offersMigration, false);
    const old = versionStatus(scanVersion("agent A {}"));
    assert.equal(old.text, "Nexa 2.4 (compatibility)");
    assert.equal(old.offersMigration, true);
  });

  it("explains an unsupported declaration", () => {
    const st = versionStatus(scanVersion("nexa 3.7;"));
    assert.equal(st.text, "Nexa 2.4 (compatibility)");
    assert.match(st.tooltip, /Unsupported version declaration `nexa 3.7`/);
    assert.match(st.tooltip, /2\.4, 3\.0/);
  });
});

describe("scanNeedsMoreText", () => {
  it("asks for more text only while the prefix is trivia up to its end", () => {
    const code = "agent A { prompt: \"x\" }\n".repeat(10);
    assert.equal(scanNeedsMoreText(code), false);
    assert.equal(scanNeedsMoreText("// a long header\n".repeat(50)), true);
    assert.equal(scanNeedsMoreText("/* still open\n" + "x\n".repeat(100)), true);
    assert.equal(scanNeedsMoreText("// header\n" + code), false);
  });
});
