#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "runtime/plot/curves_chart.h"
#include "runtime/plot/gnuplot.h"
#include "runtime/plot/metrics_series.h"

namespace zt::plot {
namespace {

namespace fs = std::filesystem;

class PlotTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zt_plot_test_" + std::string(testing::UnitTest::GetInstance()
                                                                          ->current_test_info()
                                                                          ->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write_metrics(const std::string& text) {
    fs::path file = dir_ / "metrics.jsonl";
    std::ofstream(file) << text;
    return file;
  }
  fs::path dir_;
};

TEST_F(PlotTest, ReadsTrainingAndValidationRecords) {
  MetricsSeries series = read_metrics(write_metrics(
      R"({"step":1,"loss":5.5,"lr":0.001,"tokens_per_s":1000.0,"step_ms":10}
{"step":2,"loss":5.0,"tokens_per_s":2000.0}
{"step":2,"val_loss":4.9}
)"));
  ASSERT_EQ(series.train.size(), 2u);
  EXPECT_DOUBLE_EQ(series.train.at(1).loss, 5.5);
  EXPECT_DOUBLE_EQ(series.train.at(2).tokens_per_s, 2000.0);
  ASSERT_EQ(series.val_loss.size(), 1u);
  EXPECT_DOUBLE_EQ(series.val_loss.at(2), 4.9);
  EXPECT_EQ(series.unreadable_lines, 0);
}

TEST_F(PlotTest, ALaterRecordOfAStepWinsAsAfterAResume) {
  MetricsSeries series = read_metrics(write_metrics(
      R"({"step":1,"loss":5.0,"tokens_per_s":1.0}
{"step":2,"loss":4.0,"tokens_per_s":1.0}
{"step":2,"loss":4.5,"tokens_per_s":1.0}
{"step":3,"loss":3.0,"tokens_per_s":1.0}
)"));
  ASSERT_EQ(series.train.size(), 3u);
  EXPECT_DOUBLE_EQ(series.train.at(2).loss, 4.5);
}

TEST_F(PlotTest, SkipsALineCutShortAndCountsIt) {
  MetricsSeries series = read_metrics(write_metrics("{\"step\":1,\"loss\":5.0,\"tokens_per_s\":1.0}\n{\"step\":2,\"lo"));
  EXPECT_EQ(series.train.size(), 1u);
  EXPECT_EQ(series.unreadable_lines, 1);
}

TEST_F(PlotTest, NoMetricsIsAClearError) {
  EXPECT_THROW(read_metrics(dir_ / "missing.jsonl"), UserError);
  EXPECT_THROW(read_metrics(write_metrics("{\"step\":20,\"val_loss\":4.0}\n")), UserError);
  EXPECT_THROW(read_metrics(write_metrics("")), UserError);
}

TEST_F(PlotTest, QuotesStringsForGnuplot) {
  EXPECT_EQ(gnuplot_quote("runs/a"), "'runs/a'");
  EXPECT_EQ(gnuplot_quote("it's"), "'it''s'");
  // A line break would end the string and the command; what followed would run (`!cmd`).
  EXPECT_EQ(gnuplot_quote("run\n!touch x\r\t"), "'run?!touch x?\?'");
}

TEST_F(PlotTest, DrawsAPng) {
  if (!find_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  MetricsSeries series;
  for (int step = 1; step <= 30; ++step) series.train[step] = {6.0 - step * 0.1, 1000.0 + step};
  series.val_loss[15] = 4.6;
  series.val_loss[30] = 3.1;
  const fs::path png = dir_ / "out" / "it's curves.png";
  draw_curves(series, "zerotrain run runs/it's_a_test", png);
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 1000u);
}

TEST_F(PlotTest, LineBreaksInThePathOrTitleRunNoCommand) {
  if (!find_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  MetricsSeries series;
  for (int step = 1; step <= 5; ++step) series.train[step] = {6.0 - step * 0.1, 1000.0 + step};
  const fs::path marker = dir_ / "pwned";
  const fs::path png = dir_ / ("out\n!touch " + marker.string() + "\n.png");
  draw_curves(series, "run\n!touch " + marker.string() + "\n", png);
  EXPECT_FALSE(fs::exists(marker)) << "gnuplot ran a command hidden in a path or the title";
  EXPECT_TRUE(fs::exists(png));
}

}  // namespace
}  // namespace zt::plot
