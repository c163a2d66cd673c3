"""A small bilingual bridge: a Chinese question word brings its English doc word, and the reverse.

Most MindIE and msModelSlim docs are Chinese while many questions are English (and vllm-ascend's
docs are English while many users write Chinese). Written by hand for this domain; measured on the
dev set's cross-language questions (docs/index.md). Keys are tokens as `tokenize` produces them.
"""
from __future__ import annotations

from collections.abc import Iterable

from core.index.tokenizer import stem

_PAIRS: tuple[tuple[str, str], ...] = (
    ("量化", "quantization quant quantize"),
    ("部署", "deploy deployment"),
    ("环境变量", "environment variable env"),
    ("报错", "error"),
    ("错误", "error"),
    ("失败", "fail"),
    ("安装", "install installation"),
    ("显存", "memory hbm"),
    ("内存", "memory"),
    ("不足", "insufficient"),
    ("超时", "timeout"),
    ("精度", "accuracy precision"),
    ("性能", "performance"),
    ("吞吐", "throughput"),
    ("时延", "latency"),
    ("延迟", "latency"),
    ("权重", "weight"),
    ("模型", "model"),
    ("推理", "inference"),
    ("服务化", "service serving server"),
    ("服务", "service server"),
    ("启动", "start launch"),
    ("拉起", "start launch"),
    ("配置", "config configuration"),
    ("参数", "parameter argument"),
    ("日志", "log"),
    ("版本", "version"),
    ("镜像", "image docker"),
    ("容器", "container docker"),
    ("卡", "card device npu"),
    ("多卡", "multi card device"),
    ("多机", "multi node"),
    ("单机", "single node"),
    ("并行", "parallel"),
    ("张量", "tensor"),
    ("流水线", "pipeline"),
    ("专家", "expert moe"),
    ("图模式", "graph mode"),
    ("图", "graph"),
    ("算子", "operator op kernel"),
    ("编译", "compile build"),
    ("分离", "disaggregate disaggregation"),
    ("调度", "schedule scheduler"),
    ("采样", "sample sampling"),
    ("长序列", "long sequence context"),
    ("上下文", "context"),
    ("缓存", "cache"),
    ("前缀", "prefix"),
    ("投机", "speculative"),
    ("量化权重", "quantized weight"),
    ("校准", "calibration calibrate"),
    ("稀疏", "sparse sparsity"),
    ("多模态", "multimodal"),
    ("文生图", "text image diffusion"),
    ("视频", "video"),
    ("加速", "acceleration speed"),
    ("端口", "port"),
    ("证书", "certificate tls"),
    ("集群", "cluster"),
    ("节点", "node"),
    ("负载均衡", "load balance"),
    ("高可用", "high availability"),
    ("故障", "fault failure"),
    ("健康检查", "health check"),
    ("请求", "request"),
    ("接口", "api interface endpoint"),
    ("支持", "support"),
    ("依赖", "dependency"),
    ("驱动", "driver"),
    ("固件", "firmware"),
    ("芯片", "chip soc"),
    ("用法", "usage"),
    ("示例", "example"),
    ("教程", "tutorial"),
    ("卸载", "uninstall"),
    ("升级", "upgrade"),
    ("下载", "download"),
    ("路径", "path"),
    ("文件", "file"),
    ("目录", "directory"),
    ("主备", "active standby"),
    ("高可用", "highly available"),
    ("并发", "concurrent concurrency"),
    ("连接", "connection"),
    ("响应", "response"),
    ("无响应", "hang"),
    ("调试", "debug"),
    ("中间", "intermediate"),
    ("敏感层", "sensitive layer"),
    ("回退", "fallback"),
    ("浮点", "float"),
    ("离线", "offline"),
    ("在线", "online"),
    ("扩容", "scale"),
    ("缩容", "scale"),
    ("实例", "instance"),
    ("导出", "export"),
    ("导入", "import"),
    ("状态码", "status code"),
    ("控制器", "controller"),
    ("命令", "command"),
    ("一键", "one-click"),
    ("限制", "limit"),
    ("最大", "max maximum"),
    ("精度下降", "accuracy drop"),
    # How users describe failures and measurements in chat (real_issues_dev's Chinese questions).
    ("耗时", "time latency duration"),
    ("采集", "collect profiling"),
    ("明细", "detail"),
    ("思考", "reasoning thinking think"),
    ("工具", "tool"),
    ("调用", "call calling"),
    ("卡住", "hang stuck"),
    ("崩溃", "crash"),
    ("挂", "crash hang"),
    ("乱码", "garbled garbage"),
    ("重复", "repeat repetition"),
    ("输出", "output"),
    ("段错误", "segmentation fault segfault"),
    ("泄漏", "leak"),
    ("溢出", "overflow"),
    ("抓图", "capture graph"),
    ("捕获", "capture"),
    ("视觉", "vision visual vit"),
    ("编码", "encode encoder"),
    ("截断", "truncate truncation"),
    ("找不到", "not found"),
    ("不生效", "not effect ignored"),
    ("关闭", "disable off"),
    ("开启", "enable"),
    ("通信", "communication"),
    ("分布式", "distributed"),
    ("解析", "parse parser"),
    ("模板", "template"),
    ("分词", "tokenizer"),
)


def _index(pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for zh, en in pairs:
        words = [stem(w) for w in en.split()]  # as the tokenizer writes them
        table.setdefault(zh, []).extend(words)
        for word in words:
            table.setdefault(word, []).append(zh)
    return {k: tuple(dict.fromkeys(v)) for k, v in table.items()}


_BRIDGE = _index(_PAIRS)


def bridge(tokens: Iterable[str]) -> list[str]:
    """Tokens in the other language for the question's tokens (never the tokens themselves)."""
    seen = set(tokens)
    out: list[str] = []
    for token in seen:
        for other in _BRIDGE.get(token, ()):
            if other not in seen and other not in out:
                out.append(other)
    return out
