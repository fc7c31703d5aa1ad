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
