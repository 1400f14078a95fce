// The MLP as a family: the config's mlp_hidden and mlp_layers to an MLP on a 32-wide, 8-class
// synthetic task.
#include "models/family.h"
#include "models/mlp.h"

namespace zt::models {
namespace {

class MLPFamily final : public ModelFamily {
 public:
  std::string_view name() const override { return "mlp"; }
  ModelType type() const override { return ModelType::mlp; }
  bool reads_tokens() const override { return false; }
  std::unique_ptr<Model> build(const ModelConfig& config) const override {
    MLPConfig mlp;
    mlp.input_width = 32;
    mlp.hidden_width = static_cast<int>(config.mlp_hidden);
    mlp.n_hidden = static_cast<int>(config.mlp_layers);
    mlp.n_classes = 8;
    return std::make_unique<MLP>(mlp);
  }
  ModelConfig measurement_copy(const ModelConfig& config) const override { return config; }  // small already
  // The MLP's layers are too narrow to keep a CPU busy: a 512^3 product stands for the machine.
  GemmShape widest_product(const ModelConfig&, int, int) const override { return {512, 512, 512}; }
};

}  // namespace

const ModelFamily& mlp_family() {
  static const MLPFamily family;
  return family;
}

}  // namespace zt::models
