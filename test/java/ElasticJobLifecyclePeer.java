// ElasticJob's lifecycle writes, made from Java with Apache Curator (Debian libcurator-recipes-java 5.4) the way
// ElasticJob's JobOperateAPIImpl, ShardingOperateAPIImpl and JobConfigurationAPIImpl make them through its
// ZookeeperRegistryCenter (docs/reference/elasticjob.md §6): persist = create with parents or set the data,
// remove = delete with children. ElasticJob itself cannot be installed here (no Maven Central), so its few
// lifecycle writes are made by the same client library it uses, for the operator interop test.
// Usage: java -cp curator-recipes.jar:zookeeper.jar ElasticJobLifecyclePeer.java <connect> <namespace>
// Commands on stdin, one per line; each answers "OK <detail>" or "ERROR <message>":
//   trigger <job> | disable <job> <ip> | enable <job> <ip> | shutdown <job> <ip> | disable-item <job> <item>
//   | enable-item <job> <item> | remove-job <job> | list-jobs | quit
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;

public class ElasticJobLifecyclePeer {
    static CuratorFramework client;

    public static void main(String[] args) throws Exception {
        client = CuratorFrameworkFactory.builder()
                .connectString(args[0]).namespace(args[1])
                .sessionTimeoutMs(4000).connectionTimeoutMs(4000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
        client.start();
        client.blockUntilConnected();
        System.out.println("READY");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split(" ");
            if (words[0].equals("quit")) break;
            try {
                System.out.println("OK " + run(words));
            } catch (Exception error) {
                System.out.println("ERROR " + error);
            }
            System.out.flush();
        }
        client.close();
    }

    static String run(String[] words) throws Exception {
        if (words[0].equals("list-jobs")) return listJobs();
        String job = "/" + words[1];
        switch (words[0]) {
            case "trigger": {
                // InstanceService.triggerAllInstances (kernel/.../internal/instance/InstanceService.java): trigger/
                // removed, then trigger/{id} created for every instances/ child (JobNodeStorage.createJobNodeIfNeeded:
                // persist while the job's root exists). So each is a new node, never a setData on one left over.
                remove(job + "/trigger");
                List<String> instances = client.getChildren().forPath(job + "/instances");
                for (String id : instances) {
                    if (client.checkExists().forPath(job) != null) persist(job + "/trigger/" + id, "");
                }
                return String.join(",", instances);
            }
            case "disable":
                persist(job + "/servers/" + words[2], "DISABLED");
                return words[2];
            case "enable":
                persist(job + "/servers/" + words[2], "ENABLED");
                return words[2];
            case "shutdown": {
                // The instances whose JobInstance YAML names the server IP.
                StringBuilder removed = new StringBuilder();
                for (String id : client.getChildren().forPath(job + "/instances")) {
                    String yaml = new String(client.getData().forPath(job + "/instances/" + id), StandardCharsets.UTF_8);
                    if (yaml.contains("serverIp: " + words[2])) {
                        remove(job + "/instances/" + id);
                        removed.append(id).append(' ');
                    }
                }
                return removed.toString().trim();
            }
            case "disable-item":
                persist(job + "/sharding/" + words[2] + "/disabled", "");
                return words[2];
            case "enable-item":
                remove(job + "/sharding/" + words[2] + "/disabled");
                return words[2];
            case "remove-job":
                remove(job);
                return words[1];
            default:
                throw new IllegalArgumentException("unknown command " + words[0]);
        }
    }

    /**
     * JobStatisticsAPIImpl.getAllJobsBriefInfo's list (ElasticJob 3.0.5, lifecycle/.../statistics/): every child of the
     * namespace whose config node reads non-null (getJobBriefInfo returns null for the others, which are skipped),
     * sorted; then getJobsTotalCount, the number of children. Answers "name,name|count".
     */
    static String listJobs() throws Exception {
        List<String> children = client.getChildren().forPath("/");
        List<String> jobs = new java.util.ArrayList<>();
        for (String each : children) {
            if (client.checkExists().forPath("/" + each + "/config") != null) jobs.add(each);
        }
        java.util.Collections.sort(jobs);
        return String.join(",", jobs) + "|" + children.size();
    }

    /** ElasticJob's ZookeeperRegistryCenter.persist: create with parents, or set the data of the existing node. */
    static void persist(String path, String value) throws Exception {
        byte[] data = value.getBytes(StandardCharsets.UTF_8);
        if (client.checkExists().forPath(path) == null) {
            client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(path, data);
        } else {
            client.setData().forPath(path, data);
        }
    }

    /** ElasticJob's ZookeeperRegistryCenter.remove: the node and its children. */
    static void remove(String path) throws Exception {
        if (client.checkExists().forPath(path) != null) client.delete().deletingChildrenIfNeeded().forPath(path);
    }
}
