[ -d bundle ] || tar -xJf bundle_xfer/b.tar.xz
export LD_LIBRARY_PATH=$PWD/bundle/lib:/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
R=$OUT/table; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
link() { n=$1; shift; timeout 280 bundle/mimo_gpu_ofdm_link --backend cuda --grid nr20 --nt 4 --nr 4 --frames 100 --json $R/$n.json "$@" > $R/$n.txt 2>&1; echo "$n: $(grep 'SNR at BLER' $R/$n.txt)"; }
snr() { case $1 in 16qam) echo 6:30:3;; 64qam) echo 12:36:3;; 256qam) echo 20:40:2;; esac; }
for prof in epa; do for m in 16qam 64qam 256qam; do for fd in 0 70 300; do for ti in hold lmmse; do
  link ${prof}_${m}_${fd}_${ti} --profile $prof --modulation $m --doppler $fd --interpolation $ti --snr $(snr $m) &
done; done; wait; done; done
for m in 16qam 64qam; do for fd in 0 70 300; do for ti in hold lmmse; do
  link eva_${m}_${fd}_${ti} --profile eva --modulation $m --doppler $fd --interpolation $ti --snr $(snr $m) &
done; done; done; wait
cd $OUT && tar -czf table.tgz table
