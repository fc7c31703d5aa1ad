-- Test driver (not part of the configuration): runs agents from their code lenses the way a
-- user does. After nexa.lua opened the file given on the command line, it waits for the
-- server's capabilities (Neovim 0.7 drops a code lens refresh sent before them), then for
-- each step of NEXA_LENS_STEPS (JSON: [{"lens": "<text in the lens title>", "until":
-- "<Lua pattern of the message that ends the step>"}]) refreshes the lenses until one
-- with that text is there, puts the cursor on its line and runs `vim.lsp.codelens.run()`.
-- The pickers a user would answer are overridden: `vim.ui.select` (several lenses on a
-- line; `window/showMessageRequest` on 0.10+) and `vim.fn.inputlist` (that request on 0.7)
-- choose the wanted lens, or NEXA_ANSWER (e.g. "Approve") for a server's question. What
-- Neovim shows (vim.notify, nvim_echo, nvim_out_write, nvim_err_writeln) is recorded, and
-- everything goes to NEXA_TEST_RESULT as JSON.
local result = { version = vim.version(), messages = {}, questions = {}, steps = {} }
local buf = vim.api.nvim_get_current_buf()
local timeout = tonumber(os.getenv("NEXA_TEST_TIMEOUT_MS") or "30000")
local answer = os.getenv("NEXA_ANSWER") or "Approve"
local wanted_lens = nil

local function write_result()
  local file = io.open(os.getenv("NEXA_TEST_RESULT"), "w")
  file:write(vim.fn.json_encode(result))
  file:close()
end

-- what the user sees; a message shown through several of these (vim.notify writes with
-- nvim_err_writeln on 0.7) is recorded once
local showing = false
local function recording(show, text_of)
  return function(...)
    if showing then
      return show(...)
    end
    table.insert(result.messages, text_of(...))
    showing = true
    local done = { pcall(show, ...) }
    showing = false
    if not done[1] then
      error(done[2])
    end
    return unpack(done, 2)
  end
end
vim.notify = recording(vim.notify, function(msg)
  return tostring(msg)
end)
vim.api.nvim_echo = recording(vim.api.nvim_echo, function(chunks)
  local parts = {}
  for _, chunk in ipairs(chunks) do
    table.insert(parts, chunk[1])
  end
  return table.concat(parts)
end)
for _, name in ipairs({ "nvim_out_write", "nvim_err_writeln", "nvim_err_write" }) do
  vim.api[name] = recording(vim.api[name], tostring)
end

-- the pickers
local function pick(titles, prompt)
  local want = wanted_lens
  if prompt ~= nil then
    table.insert(result.questions, { prompt = prompt, choices = titles, answer = answer })
    want = answer
  end
  for i, title in ipairs(titles) do
    if want ~= nil and (title == want or (prompt == nil and title:find(want, 1, true))) then
      return i
    end
  end
  return nil
end
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, item in ipairs(items) do
    table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item.title or item))
  end
  local question = opts.kind == "lsp_message" and opts.prompt or nil
  local i = pick(titles, question)
  on_choice(i and items[i] or nil, i)
end
vim.fn.inputlist = function(lines)
  local titles = {}
  for k = 3, #lines do
    table.insert(titles, (lines[k]:gsub("^%d+%. ", "")))
  end
  return pick(titles, lines[1]) or 0
end

local function client()
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf }) or vim.lsp.buf_get_clients(buf)
  for _, c in pairs(clients) do
    return c
  end
  return nil
end

local function lens_with(text)
  for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
    if lens.command and lens.command.title:find(text, 1, true) then
      return lens
    end
  end
  return nil
end

local function lens_titles()
  local titles = {}
  for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
    table.insert(titles, lens.command and lens.command.title or "(unresolved)")
  end
  return titles
end

local function message_since(first, pattern)
  for k = first, #result.messages do
    if result.messages[k]:find(pattern) then
      return result.messages[k]
    end
  end
  return nil
end

local ok, err = pcall(function()
  result.capabilities = vim.wait(timeout, function()
    local c = client()
    return c ~= nil and c.server_capabilities ~= nil and c.server_capabilities.codeLensProvider ~= nil
  end, 20)
  for _, step in ipairs(vim.fn.json_decode(os.getenv("NEXA_LENS_STEPS"))) do
    local done = { lens = step.lens }
    table.insert(result.steps, done)
    local lens = nil
    vim.wait(timeout, function()
      lens = lens_with(step.lens)
      if lens == nil then
        vim.lsp.codelens.refresh()
        vim.wait(200, function()
          return lens_with(step.lens) ~= nil
        end, 20)
        lens = lens_with(step.lens)
      end
      return lens ~= nil
    end, 50)
    done.lenses_before = lens_titles()
    if lens == nil then
      error("no lens with " .. step.lens .. " (lenses: " .. table.concat(done.lenses_before, " | ") .. ")")
    end
    local first = #result.messages + 1
    wanted_lens = step.lens
    vim.api.nvim_win_set_cursor(0, { lens.range.start.line + 1, 0 })
    vim.lsp.codelens.run()
    wanted_lens = nil
    vim.wait(timeout, function()
      return message_since(first, step["until"]) ~= nil
    end, 50)
    done.message = message_since(first, step["until"]) or vim.NIL
    if done.message == vim.NIL then
      error("no message like " .. step["until"] .. " after the lens " .. step.lens)
    end
  end
end)
if not ok then
  result.error = tostring(err)
end
write_result()
vim.cmd("qa!")
