// Anchors the strata_tools library so it exists even before any tool source does.
namespace strata::tools {
const char* ToolsVersion() { return "0.1.0"; }
}  // namespace strata::tools
