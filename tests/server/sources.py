"""Small Nexa sources for the server tests (written for these tests)."""

MAIN = """include "lib.nxlib";

protocol Report {
    title: str,
    score: float
}

tool Lookup { description: "Find a record by id", parameters: {"id": "string"} }

agent Analyst uses Lookup, Formatter implements Report {
    role: "Careful analyst",
    model: "scripted/demo",
    prompt: "Look the record up and score it. 请用中文回答。"
}

flow main(topic: str) {
    draft = Analyst.run(topic)
    tidy(draft)
    print(draft)
}
"""

LIB = """agent Formatter {
    prompt: "Format the text."
}

flow tidy(text: str) {
    out = Formatter.run(text)
    print(out)
}
"""

BROKEN_NAMES = """agent Writer {
    prompt: "Write."
}

flow main {
    a = Writr.run("x")
    b = Writer.run("y")
}
"""

#: Chinese and emoji before and after names on the same line (UTF-16 positions).
UNICODE = """agent Greeter { prompt: "问候 🙂 用户" }

flow main {
    s = "你好🙂世界"; r = Greeter.run(s); t = "🎉再见"; u = Greetr.run(t)
}
"""
