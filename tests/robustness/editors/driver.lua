-- Test driver (not part of the configuration): after nexa.lua opened the file given on the
-- command line, wait until the diagnostics with every code in NEXA_EXPECT_CODES (comma
-- separated) arrived, open the diagnostic float on the line of the NEXA_FLOAT_CODE finding
-- and read what it shows, ask for a hover at NEXA_HOVER_LINE/NEXA_HOVER_COL (1-based line,
-- 0-based column), format the buffer with the editor's own formatting request and write
-- what arrived to NEXA_TEST_RESULT as JSON.
local result = { diagnostics = {}, hover = vim.NIL, clients = 0, version = vim.version() }
local buf = vim.api.nvim_get_current_buf()
local timeout = tonumber(os.getenv("NEXA_TEST_TIMEOUT_MS") or "30000")

local function write_result()
  local file = io.open(os.getenv("NEXA_TEST_RESULT"), "w")
  file:write(vim.fn.json_encode(result))
  file:close()
end

local function code_of(d)
  local lsp = d.user_data and d.user_data.lsp or {}
  local code = d.code or lsp.code
  return code ~= nil and tostring(code) or nil
end

local expected = {}
for code in (os.getenv("NEXA_EXPECT_CODES") or ""):gmatch("[^,%s]+") do
  table.insert(expected, code)
end

local function all_expected_arrived()
  local seen = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    seen[code_of(d) or ""] = true
  end
  if #expected == 0 then
    return next(seen) ~= nil
  end
  for _, code in ipairs(expected) do
    if not seen[code] then
      return false
    end
  end
  return true
end

-- the highlight groups of a buffer's text, from every namespace that has extmarks there
local function highlight_groups(bufnr)
  local groups = {}
  local namespaces = { -1 }
  for _, ns in pairs(vim.api.nvim_get_namespaces()) do
    table.insert(namespaces, ns)
  end
  for _, ns in ipairs(namespaces) do
    local ok, marks = pcall(vim.api.nvim_buf_get_extmarks, bufnr, ns, 0, -1, { details = true })
    if ok then
      for _, mark in ipairs(marks) do
        local group = mark[4] and mark[4].hl_group
        if group then
          groups[group] = true
        end
      end
    end
  end
  return vim.tbl_keys(groups)
end

-- the float's highlights: Neovim 0.7 adds them without a namespace (no extmarks to read
-- back), so record the groups it adds while the float opens
local function open_float_recording_highlights()
  local added = {}
  local add_highlight = vim.api.nvim_buf_add_highlight
  vim.api.nvim_buf_add_highlight = function(bufnr, ns, group, ...)
    added[group] = true
    return add_highlight(bufnr, ns, group, ...)
  end
  local ok, float_buf, float_win = pcall(vim.diagnostic.open_float, { scope = "line" })
  vim.api.nvim_buf_add_highlight = add_highlight
  if not ok then
    error(float_buf)
  end
  return float_buf, float_win, vim.tbl_keys(added)
end

local function open_float_on(code)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if code_of(d) == code then
      vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
      local float_buf, float_win, added = open_float_recording_highlights()
      if not float_buf then
        return { line = d.lnum, opened = false }
      end
      local float = {
        line = d.lnum,
        opened = true,
        text = table.concat(vim.api.nvim_buf_get_lines(float_buf, 0, -1, false), "\n"),
        highlights = vim.list_extend(highlight_groups(float_buf), added),
      }
      vim.api.nvim_win_close(float_win, true)
      return float
    end
  end
  return vim.NIL
end

local ok, err = pcall(function()
  result.filetype = vim.bo[buf].filetype
  result.expected_arrived = vim.wait(timeout, all_expected_arrived, 50)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.diagnostics, {
      line = d.lnum,
      col = d.col,
      message = d.message,
      severity = d.severity,
      code = code_of(d),
      source = d.source,
    })
  end
  local float_code = os.getenv("NEXA_FLOAT_CODE")
  if float_code then
    result.float = open_float_on(float_code)
  end
  result.clients = vim.lsp.get_clients and #vim.lsp.get_clients({ bufnr = buf }) or #vim.lsp.buf_get_clients(buf)
  vim.api.nvim_win_set_cursor(0, { tonumber(os.getenv("NEXA_HOVER_LINE")), tonumber(os.getenv("NEXA_HOVER_COL")) })
  local params = vim.lsp.util.make_position_params(0, "utf-16")
  local responses = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, timeout)
  for _, response in pairs(responses or {}) do
    if response.result then
      result.hover = response.result
    elseif response.err then
      result.hover_error = response.err
    end
  end
  if vim.lsp.buf.format then
    vim.lsp.buf.format({ timeout_ms = timeout })
  else
    vim.lsp.buf.formatting_sync(nil, timeout)
  end
  result.formatted = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end)
if not ok then
  result.error = tostring(err)
end
write_result()
vim.cmd("qa!")
