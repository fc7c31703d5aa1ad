-- Test driver (not part of the configuration): after nexa.lua opened the file given on the
-- command line, wait for its diagnostics, ask for a hover at NEXA_HOVER_LINE/NEXA_HOVER_COL
-- (1-based line, 0-based column), format the buffer with the editor's own formatting request
-- and write what arrived to NEXA_TEST_RESULT as JSON.
local result = { diagnostics = {}, hover = vim.NIL, clients = 0, version = vim.version() }
local buf = vim.api.nvim_get_current_buf()
local timeout = tonumber(os.getenv("NEXA_TEST_TIMEOUT_MS") or "30000")

local function write_result()
  local file = io.open(os.getenv("NEXA_TEST_RESULT"), "w")
  file:write(vim.fn.json_encode(result))
  file:close()
end

local ok, err = pcall(function()
  result.filetype = vim.bo[buf].filetype
  vim.wait(timeout, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    table.insert(result.diagnostics, {
      line = d.lnum,
      col = d.col,
      message = d.message,
      severity = d.severity,
      code = d.code or lsp.code,
      source = d.source,
    })
  end
  result.clients = #vim.lsp.buf_get_clients(buf)
  vim.api.nvim_win_set_cursor(0, { tonumber(os.getenv("NEXA_HOVER_LINE")), tonumber(os.getenv("NEXA_HOVER_COL")) })
  local params = vim.lsp.util.make_position_params()
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
