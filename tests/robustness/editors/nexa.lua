-- Nexa in Neovim's built-in LSP client. Works on Neovim 0.7 and later (tested with 0.7.2 and 0.11.4).
-- Put it in your init.lua (or load it with `:luafile`); `nexa-lsp` must be on the PATH.

-- .nx and .nxlib files are Nexa sources
vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
  pattern = { "*.nx", "*.nxlib" },
  callback = function()
    vim.bo.filetype = "nexa"
  end,
})

-- the project root: the nearest folder with .git or .nexa, else the file's folder
local function nexa_root(file)
  local start = vim.fn.fnamemodify(file, ":p:h")
  for _, marker in ipairs({ ".git", ".nexa" }) do
    local found = vim.fn.finddir(marker, start .. ";")
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p:h:h")
    end
  end
  return start
end

-- one server for every Nexa buffer of the session
local nexa_client = nil
vim.api.nvim_create_autocmd("FileType", {
  pattern = "nexa",
  callback = function(args)
    -- indent with 4 spaces, as the server's formatter does with these options
    vim.bo[args.buf].expandtab = true
    vim.bo[args.buf].shiftwidth = 4
    vim.bo[args.buf].softtabstop = 4
    local config = {
      name = "nexa-lsp",
      cmd = { "nexa-lsp" },
      root_dir = nexa_root(vim.api.nvim_buf_get_name(args.buf)),
      -- answers to workspace/configuration (all optional)
      settings = { nexa = { diagnostics = { migrationHints = true } } },
    }
    if vim.lsp.start then
      -- Neovim 0.8 and later: starts the server, or reuses the one of this root folder
      vim.lsp.start(config, { bufnr = args.buf })
      return
    end
    if nexa_client == nil or vim.lsp.client_is_stopped(nexa_client) then
      nexa_client = vim.lsp.start_client(config)
    end
    vim.lsp.buf_attach_client(args.buf, nexa_client)
  end,
})

-- show each finding's code (NX001, NXM002, ...) in the diagnostic float, as Neovim 0.10
-- and later do by default
if vim.fn.has("nvim-0.10") == 0 then
  vim.diagnostic.config({
    float = {
      format = function(d)
        local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
        return code and string.format("%s [%s]", d.message, code) or d.message
      end,
    },
  })
end
