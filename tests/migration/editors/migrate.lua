-- Test driver (not part of the configuration): with nexa.lua attached to the file given on the
-- command line, ask nexa/migrationStatus, run nexa.migrateWorkspace (Neovim's own client applies
-- the workspace edit the server sends, loading the files that are not open), write every
-- changed buffer, run the command again, and write what arrived to NEXA_TEST_RESULT as JSON.
local result = { version = vim.version() }
local buf = vim.api.nvim_get_current_buf()
local timeout = tonumber(os.getenv("NEXA_TEST_TIMEOUT_MS") or "30000")

local function write_result()
  local file = io.open(os.getenv("NEXA_TEST_RESULT"), "w")
  file:write(vim.fn.json_encode(result))
  file:close()
end

local function request(method, params)
  local responses = vim.lsp.buf_request_sync(buf, method, params, timeout)
  for _, response in pairs(responses or {}) do
    if response.err then
      error(method .. ": " .. vim.inspect(response.err))
    end
    return response.result
  end
  error(method .. ": no answer")
end

local ok, err = pcall(function()
  vim.wait(timeout, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50)
  result.clients = #vim.lsp.buf_get_clients(buf)
  result.status = request("nexa/migrationStatus", {})
  result.command_status = request("workspace/executeCommand", { command = "nexa.migrationStatus", arguments = {} })
  result.migrate = request("workspace/executeCommand", { command = "nexa.migrateWorkspace", arguments = {} })
  result.modified = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified then
      table.insert(result.modified, vim.api.nvim_buf_get_name(b))
    end
  end
  vim.cmd("silent wall")
  result.second = request("workspace/executeCommand", { command = "nexa.migrateWorkspace", arguments = {} })
end)
if not ok then
  result.error = tostring(err)
end
write_result()
vim.cmd("qa!")
