// Tests of apps/raw_item_file: the raw item files of mimo_gpu_detect_file.
#include "raw_item_file.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using mimo_gpu_apps::file_error;
using mimo_gpu_apps::raw_item_reader;
using mimo_gpu_apps::raw_item_writer;
using mimo_gpu_apps::require_same_item_count;

namespace {

class raw_item_file_test : public ::testing::Test
{
protected:
    void SetUp() override
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_dir = std::filesystem::temp_directory_path() /
                (std::string("mimo_gpu_raw_item_file_") + info->name() + "_" +
                 std::to_string(::getpid()));
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }

    std::string path(const std::string& name) const { return (m_dir / name).string(); }
    std::string write_bytes(const std::string& name, size_t bytes) const
    {
        std::vector<char> data(bytes);
        std::iota(data.begin(), data.end(), char(0));
        std::ofstream(path(name), std::ios::binary)
            .write(data.data(), std::streamsize(bytes));
        return path(name);
    }
    static std::string message_of(const std::function<void()>& f)
    {
        try {
            f();
        } catch (const file_error& e) {
            return e.what();
        }
        return "(no file_error thrown)";
    }

    std::filesystem::path m_dir;
};

} // namespace

TEST_F(raw_item_file_test, reads_whole_items_in_batches_with_a_short_last_batch)
{
    const std::string p = write_bytes("ten.bin", 10 * 8);
    raw_item_reader r(p, 8, "H file");
    EXPECT_EQ(r.items(), 10u);
    EXPECT_EQ(r.size_bytes(), 80u);
    std::vector<char> buf(4 * 8);
    std::vector<char> all;
    std::vector<size_t> batches;
    while (size_t n = r.read(buf.data(), 4)) {
        batches.push_back(n);
        all.insert(all.end(), buf.begin(), buf.begin() + n * 8);
    }
    EXPECT_EQ(batches, (std::vector<size_t>{ 4, 4, 2 }));
    ASSERT_EQ(all.size(), 80u);
    for (size_t i = 0; i < all.size(); ++i)
        EXPECT_EQ(all[i], char(i));
    EXPECT_EQ(r.items_read(), 10u);
    EXPECT_EQ(r.read(buf.data(), 4), 0u);
}

TEST_F(raw_item_file_test, empty_file_has_no_items)
{
    raw_item_reader r(write_bytes("empty.bin", 0), 32, "y file");
    EXPECT_EQ(r.items(), 0u);
    char c;
    EXPECT_EQ(r.read(&c, 1), 0u);
}

TEST_F(raw_item_file_test, missing_file_is_named)
{
    const std::string p = path("missing.bin");
    EXPECT_EQ(message_of([&] { raw_item_reader(p, 8, "H file"); }),
              "cannot open H file '" + p + "': no such file");
}

TEST_F(raw_item_file_test, directory_is_refused)
{
    EXPECT_NE(message_of([&] {
                  raw_item_reader(m_dir.string(), 8, "H file");
              }).find("is a directory"),
              std::string::npos);
}

TEST_F(raw_item_file_test, truncated_file_names_size_and_item_size)
{
    const std::string p = write_bytes("short.bin", 3 * 32 + 5);
    EXPECT_EQ(message_of([&] { raw_item_reader(p, 32, "H file"); }),
              "H file '" + p +
                  "' has 101 bytes, not a whole number of 32-byte items (3 items and 5 "
                  "bytes over): "
                  "truncated, or written with other dimensions");
}

TEST_F(raw_item_file_test, different_item_counts_are_refused)
{
    raw_item_reader h(write_bytes("h.bin", 5 * 32), 32, "H file");
    raw_item_reader y(write_bytes("y.bin", 4 * 16), 16, "y file");
    raw_item_reader y5(write_bytes("y5.bin", 5 * 16), 16, "y file");
    const std::string msg = message_of([&] { require_same_item_count(h, y); });
    EXPECT_NE(msg.find("item counts differ"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(160 bytes, 5 items of 32 bytes)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(64 bytes, 4 items of 16 bytes)"), std::string::npos) << msg;
    EXPECT_NO_THROW(require_same_item_count(h, y5));
}

TEST_F(raw_item_file_test,
       a_writer_that_is_not_closed_leaves_no_file_and_the_old_one_unchanged)
{
    const std::string fresh = path("fresh.f32"), old = path("old.f32");
    {
        std::ofstream(old) << "previous";
    }
    {
        raw_item_writer a(fresh, sizeof(float), "LLR output file"),
            b(old, sizeof(float), "LLR output file");
        const float x = 1.0f;
        a.write(&x, 1);
        b.write(&x, 1);
        // no close(): as when a run fails half way
    }
    EXPECT_FALSE(std::filesystem::exists(fresh));
    std::ifstream in(old);
    std::string text;
    std::getline(in, text);
    EXPECT_EQ(text, "previous");
    for (const auto& entry :
         std::filesystem::directory_iterator(std::filesystem::path(old).parent_path()))
        EXPECT_EQ(entry.path().string().find(".partial-"), std::string::npos)
            << entry.path();
}

TEST_F(raw_item_file_test, writer_round_trip)
{
    const std::string p = path("out.f32");
    {
        raw_item_writer w(p, 3 * sizeof(float), "LLR output file");
        const std::vector<float> a{ 1, 2, 3, 4, 5, 6 }, b{ -1, -2, -3 };
        w.write(a.data(), 2);
        w.write(b.data(), 1);
        w.close();
        EXPECT_EQ(w.items_written(), 3u);
    }
    raw_item_reader r(p, 3 * sizeof(float), "LLR file");
    ASSERT_EQ(r.items(), 3u);
    std::vector<float> back(9);
    EXPECT_EQ(r.read(back.data(), 9), 3u);
    EXPECT_EQ(back, (std::vector<float>{ 1, 2, 3, 4, 5, 6, -1, -2, -3 }));
}

TEST_F(raw_item_file_test, unwritable_output_is_named)
{
    const std::string p = path("no/such/folder/out.f32");
    EXPECT_EQ(message_of([&] {
                  raw_item_writer(p, 4, "LLR output file");
              }).rfind("cannot write LLR output file '" + p + "'", 0),
              0u);
}

// Issue 23 item 6: a FIFO, a device or a link is written directly, never
// renamed over (the temporary-file-and-rename turned /dev/stdout, a link, into
// a regular file of LLRs).
TEST_F(raw_item_file_test, special_outputs_are_written_in_place_not_replaced)
{
    const std::string fifo = path("pipe"), target = path("target.f32"),
                      link = path("link.f32");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::vector<char> received;
    std::thread reader([&] {
        std::ifstream in(fifo, std::ios::binary);
        received.assign(std::istreambuf_iterator<char>(in), {});
    });
    const std::vector<float> x{ 1.5f, -2.5f };
    {
        raw_item_writer w(fifo, sizeof(float), "LLR output file");
        w.write(x.data(), 2);
        w.close();
    }
    reader.join();
    struct stat st;
    ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
    ASSERT_EQ(received.size(), 2 * sizeof(float));
    EXPECT_EQ(std::memcmp(received.data(), x.data(), received.size()), 0);

    std::ofstream(target) << "old";
    std::filesystem::create_symlink(target, link);
    {
        raw_item_writer w(link, sizeof(float), "LLR output file");
        w.write(x.data(), 2);
        w.close();
    }
    EXPECT_TRUE(std::filesystem::is_symlink(link)) << "the link was replaced";
    EXPECT_EQ(std::filesystem::file_size(target), 2 * sizeof(float));
    {
        raw_item_writer w("/dev/null", sizeof(float), "LLR output file");
        w.write(x.data(), 2);
        w.close();
    }
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    for (const auto& entry : std::filesystem::directory_iterator(m_dir))
        EXPECT_EQ(entry.path().string().find(".partial-"), std::string::npos)
            << entry.path();
}

// Issue 23 item 9: a run stopped by a signal leaves no OUT.partial-PID file.
TEST_F(raw_item_file_test, fatal_signals_remove_the_temporary_file)
{
    for (int sig : { SIGINT, SIGTERM, SIGHUP, SIGXFSZ }) {
        const std::string out = path("out" + std::to_string(sig) + ".f32");
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            raw_item_writer w(out, sizeof(float), "LLR output file");
            const float x = 1.0f;
            w.write(&x, 1);
            ::raise(sig);
            ::_exit(3); // not reached
        }
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig)
            << "signal " << sig << " status " << status;
        EXPECT_FALSE(std::filesystem::exists(out)) << sig;
        for (const auto& entry : std::filesystem::directory_iterator(m_dir))
            EXPECT_EQ(entry.path().string().find(".partial-"), std::string::npos)
                << "signal " << sig << ": " << entry.path();
    }
}
