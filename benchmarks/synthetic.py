"""Synthetic Nexa sources of a given size, built from valid declarations (for benchmarks)."""

from __future__ import annotations


def agent_block(i: int) -> str:
    return (
        f"// 代理 {i}: writes drafts\n"
        f"agent Writer{i} uses Search{i % 50} {{\n"
        f'    role: "Writer number {i}",\n'
        f'    prompt: "Write a short draft about the topic. 用中文回答。",\n'
        f'    model: "deepseek/deepseek-chat",\n'
        f"    memory: persistent\n"
        f"}}\n"
    )


def tool_block(i: int) -> str:
    return f'tool Search{i} {{ description: "Search source {i}", parameters: {{"q": "string"}} }}\n'


def flow_block(i: int) -> str:
    return (
        f"flow pipeline{i} {{\n"
        f'    draft = Writer{i}.run("topic {i}")\n'
        f'    if (draft != "") {{\n'
        f"        print(draft)\n"
        f"    }}\n"
        f"}}\n"
    )


def synthetic_source(lines: int) -> str:
    """About ``lines`` lines: 50 tools, then agents and flows in turn."""
    parts = [tool_block(i) for i in range(50)]
    count = len(parts)
    i = 0
    while count < lines:
        block = agent_block(i) + flow_block(i)
        parts.append(block)
        count += block.count("\n")
        i += 1
    return "".join(parts)


def spread_tool_block(i: int) -> str:
    return (
        f"tool Lookup{i} {{\n"
        f'    description: "Look up records of kind {i} (查询记录)",\n'
        f'    parameters: {{"id": "string", "limit": "number"}}\n'
        f"}}\n"
    )


def spread_agent_block(i: int) -> str:
    return (
        f"// 代理 {i}: drafts with a lookup tool\n"
        f"agent Drafter{i} uses Lookup{i // 4} {{\n"
        f'    role: "Drafter number {i}",\n'
        f'    prompt: "Draft a short text about the topic. 用中文回答。",\n'
        f'    model: "deepseek/deepseek-chat"\n'
        f"}}\n"
    )


def spread_flow_block(i: int) -> str:
    return (
        f"flow compose{i}(topic: str) {{\n"
        f'    draft = Drafter{i}.run("topic {i}: {{topic}}")\n'
        f'    if (draft != "") {{\n'
        f"        summary = draft >> Drafter{i}\n"
        f"        print(summary)\n"
        f"    }}\n"
        f"}}\n"
    )


def mixed_source(lines: int) -> str:
    """About ``lines`` lines where tools, agents and flows alternate through the whole file
    (one tool per four agents), so that an edit in the middle can hit each kind."""
    parts: list[str] = []
    count = 0
    i = 0
    while count < lines:
        block = (spread_tool_block(i // 4) if i % 4 == 0 else "") + spread_agent_block(i) + spread_flow_block(i)
        parts.append(block)
        count += block.count("\n")
        i += 1
    return "".join(parts)
